import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client, Connection } from "@temporalio/client";
import { expect } from "chai";
import { connect, type NatsConnection } from "nats";
import type { Browser, Page } from "playwright-core";
import { fromRoot } from "../../common/paths.js";
import { type DevServer, startDevServer } from "../../common/temporal-dev-server.js";
import { searchAttributeCliArgs } from "../../workflows/search-attributes.js";
import { launchChromium } from "../support/chromium.js";
import { freePort } from "../support/ports.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";
import { ServiceProcess } from "../support/process.js";
import { Receiver } from "../support/receiver.js";

const SHOTS = fromRoot("test-output", "temporal-ui");

/**
 * An operator's view: the dev server's Web UI in Debian's Chromium, filtering
 * deliveries by our search attributes and opening one. Screenshots land in
 * test-output/temporal-ui/.
 */
describe("inspecting deliveries in the Temporal Web UI (Chromium)", function () {
  this.timeout(180_000);
  let temporal: DevServer;
  let db: TestDatabase;
  let serve: ServiceProcess;
  let receiver: Receiver;
  let nats: NatsConnection;
  let browser: Browser;
  let page: Page;
  const topic = `events-${randomBytes(4).toString("hex")}`;
  const stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;
  let configId = "";
  const workflowIds: string[] = [];

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    const dir = await mkdtemp(path.join(tmpdir(), "etp-ui-"));
    temporal = await startDevServer({
      searchAttributes: searchAttributeCliArgs(),
      port: await freePort(),
      uiPort: await freePort(),
      logFile: path.join(dir, "server.log"),
    });
    db = await createTestDatabase();
    receiver = await new Receiver().start();
    const port = await freePort();
    serve = new ServiceProcess("webhooks", [
      "serve",
      "--worker",
      "--listen",
      `127.0.0.1:${port}`,
      "--storage-sqldb-conn-string",
      db.url,
      "--temporal-address",
      temporal.address,
      "--broker-topics",
      topic,
      "--nats-stream",
      stream,
      "--audit-topic",
      "",
    ]);
    const api = `http://127.0.0.1:${port}`;
    await serve.waitHealthy(`${api}/_healthcheck`);
    const created = await fetch(`${api}/configs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        endpoint: receiver.url,
        eventTypes: ["ledger.ui_inspected", "ledger.ui_other"],
      }),
    }).then((r) => r.json() as Promise<{ data: { id: string } }>);
    configId = created.data.id;
    nats = await connect({ servers: "nats://127.0.0.1:4222" });
    for (const [i, type] of ["UI_INSPECTED", "UI_INSPECTED", "UI_OTHER"].entries()) {
      const key = `ui-${i}-${randomBytes(3).toString("hex")}`;
      await nats
        .jetstream()
        .publish(topic, JSON.stringify({ idempotency_key: key, app: "ledger", type, payload: { i } }));
      workflowIds.push(`delivery:${configId}:${key}`);
    }
    const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
    for (const id of workflowIds) {
      for (let t = 0; ; t++) {
        try {
          await client.workflow.getHandle(id).result();
          break;
        } catch (err) {
          if (t > 100) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
    await client.connection.close();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    await temporal?.stop();
    await receiver?.stop();
    await db?.drop();
    await (await nats?.jetstreamManager())?.streams.delete(stream).catch(() => {});
    await nats?.close();
  });

  const listWith = async (query: string, shot: string) => {
    await page.goto(`${temporal.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
    // The page renders after its scripts load, and visibility is eventually
    // consistent: poll, reloading now and then, until the rows are there.
    for (let i = 1; i <= 60; i++) {
      await page.waitForTimeout(500);
      if ((await page.locator("body").innerText()).includes("delivery:")) break;
      if (i % 8 === 0) await page.reload();
    }
    await page.waitForTimeout(500);
    await page.screenshot({ path: path.join(SHOTS, shot), fullPage: true });
    return page.locator("body").innerText();
  };

  it("filters deliveries by event type", async () => {
    const text = await listWith('WebhookEventType = "ledger.ui_inspected"', "filter-by-event-type.png");
    expect(text).to.include(workflowIds[0]);
    expect(text).to.include(workflowIds[1]);
    expect(text).to.not.include(workflowIds[2]);
  });

  it("filters deliveries by config and status", async () => {
    const text = await listWith(
      `WebhookConfigId = "${configId}" AND WebhookDeliveryStatus = "success"`,
      "filter-by-config.png",
    );
    for (const id of workflowIds) expect(text).to.include(id);
  });

  it("opens one delivery with its summary and input", async () => {
    await page.locator("a", { hasText: workflowIds[0]! }).first().click();
    await page.waitForURL(/\/workflows\/delivery/);
    for (let i = 0; i < 20 && !(await page.locator("body").innerText()).includes("deliverWebhook"); i++) {
      await page.waitForTimeout(500);
    }
    await page.screenshot({ path: path.join(SHOTS, "delivery.png"), fullPage: true });
    const text = await page.locator("body").innerText();
    expect(text).to.include("deliverWebhook");
    // The input names the stored event (core/stored-events.ts); the summary shows its type.
    expect(text).to.include('"eventRef"');
    expect(text).to.match(/"id": "sha256:[0-9a-f]{64}"/);
    expect(text).to.include('"status": "success"');
    await page.getByText("User Metadata").first().click();
    // The UI renders the summary (markdown) inside a frame of its own.
    const everyFrameText = async () =>
      (
        await Promise.all(
          page.frames().map((f) =>
            f
              .locator("body")
              .innerText()
              .catch(() => ""),
          ),
        )
      ).join(" ");
    let shown = "";
    // The summary and the current details may render apart (a loaded run saw the details late).
    for (let i = 0; i < 40 && !(/→/.test(shown) && shown.includes("success: HTTP 200")); i++) {
      await page.waitForTimeout(250);
      shown = await everyFrameText();
    }
    await page.screenshot({ path: path.join(SHOTS, "delivery-summary.png"), fullPage: true });
    expect(shown).to.match(/ledger\.ui_inspected → 127\.0\.0\.1:\d+/);
    expect(shown).to.include("success: HTTP 200");
  });
});
