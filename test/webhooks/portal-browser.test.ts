// tags: @long (over 45 s: among the first files the parallel suite starts)
import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { fromRoot } from "../../common/paths.js";
import { launchChromium } from "../support/chromium.js";
import { deleteStream } from "../support/nats-streams.js";
import { axeViolations, createSession, type PortalSession, tabTo } from "../support/portal-browser.js";
import { Receiver, signedWith } from "../support/receiver.js";
import { makeTestPki, type TestPki } from "../support/test-pki.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

// The consumer portal as a tenant's user sees it: the page served by `serve` under /portal,
// its API calls made with the session token only, in Debian's Chromium. Screenshots of the
// main screens go to test-output/portal/; with UPDATE_PORTAL_SCREENSHOTS=1 to docs/portal/
// (committed, shown in docs/webhooks/tenants-and-portal.md), so a test run leaves the working tree as it was.
// Every page runs with a fixed locale and time zone, and no test may leave a console error
// behind: one that provokes an error answer takes exactly that answer's line out
// (errorAnswers); everything else on the console fails the test that made it.

const SHOTS = process.env.UPDATE_PORTAL_SCREENSHOTS
  ? fromRoot("docs", "portal")
  : fromRoot("test-output", "portal");
const VIEWPORT = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };
const ZONE = "America/New_York";
/** A time as the page shows it in ZONE (portal/src/format.ts). */
const shown = (iso: string) =>
  new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "long", timeZone: ZONE }).format(
    new Date(iso),
  );

describe("consumer portal in Chromium", function () {
  this.timeout(240_000);
  let api: WebhooksUnderTest;
  let browser: Browser;
  let receiver: Receiver;
  const suffix = randomBytes(3).toString("hex");
  const stream = `PORTAL_${suffix.toUpperCase()}`;
  const tenantA = { uid: `acme-${suffix}`, id: "" };
  const tenantB = { uid: `globex-${suffix}`, id: "" };

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    receiver = await new Receiver().start();
    api = await startWebhooks({
      worker: true,
      args: [
        "--broker-topics",
        `portal-${suffix}`,
        "--nats-stream",
        stream,
        "--audit-topic",
        "",
        "--min-backoff-delay",
        "300ms",
        "--max-backoff-delay",
        "600ms",
        "--max-attempts",
        "3",
        // The list's paging test makes its 50 deliveries with test sends, past their quota.
        "--config-max-test-sends",
        "0",
        "--tenant-max-test-sends",
        "0",
      ],
    });
    for (const tenant of [tenantA, tenantB]) {
      const created = await api.call("POST", "/tenants", { uid: tenant.uid, name: `${tenant.uid} Inc.` });
      expect(created.status, created.text).to.equal(200);
      tenant.id = created.body.data.id;
    }
    // The catalog: one type with a schema and no example (the page builds one), one plain.
    const put = await api.call("PUT", "/event-types/shop.order_paid", {
      description: "An order was paid",
      schema: {
        type: "object",
        required: ["orderId", "amount"],
        properties: {
          orderId: { type: "string", examples: ["ord_1042"] },
          amount: { type: "integer", minimum: 1 },
          currency: { enum: ["EUR", "USD"] },
        },
      },
    });
    expect(put.status, put.text).to.be.oneOf([200, 201]);
    await api.call("PUT", "/event-types/shop.order_refunded", { description: "An order was refunded" });
    // A type with an example: test events can send it.
    const shipped = await api.call("PUT", "/event-types/shop.order_shipped", {
      description: "An order was shipped",
      example: { orderId: "ord_77", carrier: "DHL" },
    });
    expect(shipped.status, shipped.text).to.equal(201);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
    await receiver?.stop();
    await deleteStream(stream);
  });

  /** Page errors, console errors (CSP refusals, failed loads) and 4xx/5xx answers of each opened page. */
  const errorsOf = new WeakMap<Page, string[]>();
  /** The pages open now: each test ends with none of their errors left. */
  const live = new Set<Page>();

  async function open(
    session: PortalSession,
    viewport: { width: number; height: number } = VIEWPORT,
  ): Promise<{ context: BrowserContext; page: Page }> {
    const phone = viewport.width < 600;
    const context = await browser.newContext({
      viewport,
      locale: "en-US",
      timezoneId: ZONE,
      ...(phone ? { isMobile: true, hasTouch: true } : {}),
    });
    const page = await context.newPage();
    const errors: string[] = [];
    errorsOf.set(page, errors);
    live.add(page);
    page.on("close", () => live.delete(page));
    page.on("pageerror", (err) => errors.push(err.message));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("response", (r) => {
      if (r.status() >= 400) errors.push(`answer ${r.status()} ${new URL(r.url()).pathname}`);
    });
    await page.goto(session.url);
    return { context, page };
  }

  const base = (page: Page) => page.url().split("#")[0]!;
  const pageErrors = (page: Page) => errorsOf.get(page) ?? [];

  /**
   * The test provoked `status` answers from the API: their lines (the answer and the
   * browser's "Failed to load resource" for it) leave the page's errors. At least one must be there.
   */
  function errorAnswers(page: Page, status: number): void {
    const errors = pageErrors(page);
    const expected = (e: string) => e.startsWith(`answer ${status} `) || e.includes(`status of ${status} `);
    expect(errors.filter(expected), `the ${status} answers this test provoked`).not.to.deep.equal([]);
    errors.splice(0, errors.length, ...errors.filter((e) => !expected(e)));
  }

  afterEach(function () {
    for (const page of live) {
      const errors = pageErrors(page).splice(0);
      expect(errors, `console errors during "${this.currentTest?.title}"`).to.deep.equal([]);
    }
  });

  /** Nothing on the page is wider than its viewport (no sideways scrolling). */
  async function fits(page: Page, screen: string): Promise<void> {
    const { scroll, viewport } = (await page.evaluate(
      "({ scroll: document.documentElement.scrollWidth, viewport: window.innerWidth })",
    )) as { scroll: number; viewport: number };
    expect(scroll, `${screen}: document ${scroll} px wide in a ${viewport} px viewport`).to.be.at.most(
      viewport,
    );
  }

  const event = (tenant: string, type: string, payload: unknown) =>
    api.call("POST", "/events", {
      tenant,
      app: "shop",
      type,
      idempotency_key: `portal-${randomBytes(6).toString("hex")}`,
      payload,
    });

  /** Made by (a), visited again on a phone. */
  let ordersId = "";
  let failedWebhook = "";

  const deliveryRowOf = (page: Page, webhookId: string) =>
    page.locator(`table.deliveries tr[data-webhook="${webhookId}"]`);
  const deliveryRow = (page: Page, text: string) =>
    page.locator("table.deliveries tbody tr", { hasText: text });

  describe("(a) an endpoint's life: create, test, deliveries, retries, replay, secret rotation", () => {
    let session: PortalSession;
    let context: BrowserContext;
    let page: Page;
    let configId = "";

    before(async () => {
      session = await createSession(api, `uid:${tenantA.uid}`, { theme: { brandColor: "#7b2cbf" } });
      ({ context, page } = await open(session));
    });
    after(() => context?.close());

    it("opens on the tenant's endpoints with the token out of the address bar and the theme applied", async () => {
      await page.getByRole("heading", { name: "Endpoints" }).waitFor();
      expect(page.url()).not.to.include(session.token);
      expect(page.url()).to.match(/\/portal\/#\/$/);
      expect(await page.getByText(`${tenantA.uid} Inc. · Webhooks`).count()).to.equal(1);
      const brand = await page.evaluate('document.documentElement.style.getPropertyValue("--brand")');
      expect(brand).to.equal("#7b2cbf");
      await page.screenshot({ path: `${SHOTS}/endpoints-empty.png` });
    });

    it("names its icon, so the browser asks for no /favicon.ico", async () => {
      const icon = await page.locator('link[rel="icon"]').getAttribute("href");
      const answer = await page.request.get(new URL(icon!, page.url()).toString());
      expect(answer.status()).to.equal(200);
      expect(answer.headers()["content-type"]).to.match(/^image\/svg\+xml/);
      // A load asked for /favicon.ico before: the API's 404 was an error on every load.
      const asked: string[] = [];
      page.on("request", (r) => asked.push(new URL(r.url()).pathname));
      await page.reload();
      await page.getByRole("heading", { name: "Endpoints" }).waitFor();
      await page.waitForLoadState("networkidle");
      expect(asked.filter((p) => p.endsWith("favicon.ico"))).to.deep.equal([]);
      expect(asked).to.include(new URL(icon!, page.url()).pathname);
      // Chromium does not report its own /favicon.ico request as the page's, only its 404 on the console.
      expect(pageErrors(page)).to.deep.equal([]);
    });

    it("creates an endpoint from the form", async () => {
      await page.getByRole("link", { name: "Add endpoint" }).click();
      await page.getByLabel("Endpoint URL").fill(receiver.url);
      await page.getByLabel("Name (optional)").fill("Orders");
      await page.getByLabel("shop.order_paid").check();
      await page.getByRole("button", { name: "Create endpoint" }).click();
      await page.getByRole("heading", { name: "Orders" }).waitFor();
      configId = decodeURIComponent(page.url().split("#/endpoints/")[1]!);
      const stored = await api.call("GET", `/configs/${configId}`);
      expect(stored.status).to.equal(200);
      expect(stored.body.data).to.include({ endpoint: receiver.url, name: "Orders", tenantId: tenantA.id });
      expect(stored.body.data.eventTypes).to.deep.equal(["shop.order_paid"]);
      ordersId = configId;
    });

    it("sends a test event and shows its result, then the delivery with its 200 attempt", async () => {
      const before = receiver.requests.length;
      await page.getByRole("button", { name: "Send test event" }).click();
      await page.locator(".test-result", { hasText: "success" }).waitFor();
      expect(await page.locator(".test-result").textContent()).to.include("HTTP 200");
      expect(receiver.requests.length).to.equal(before + 1);
      const row = deliveryRow(page, "success");
      await row.first().waitFor();
      expect(await row.first().locator(".status-code").textContent()).to.equal("200");
      await row.first().getByRole("link").click();
      await page.getByRole("heading", { name: "Delivery" }).waitFor();
      const attempts = page.locator("ol.attempts li.attempt");
      expect(await attempts.count()).to.equal(1);
      expect(await attempts.first().locator(".status-code").textContent()).to.equal("200");
      await page.goBack();
    });

    it("sends the example of the catalog type picked as the test event", async () => {
      await page.getByLabel("Test event").selectOption("shop.order_shipped");
      // Types without an example in the catalog are not offered.
      const options = await page.locator("#test-event-type option").all();
      const offered = await Promise.all(options.map((o) => o.getAttribute("value")));
      expect(offered).to.deep.equal(["webhooks.test", "shop.order_shipped"]);
      const before = receiver.requests.length;
      await page.getByRole("button", { name: "Send test event" }).click();
      await page.locator(".test-result", { hasText: "success" }).waitFor();
      expect(receiver.requests.length).to.equal(before + 1);
      const received = JSON.parse(receiver.requests.at(-1)!.body);
      expect(received).to.deep.include({
        type: "shop.order_shipped",
        app: "shop",
        payload: { orderId: "ord_77", carrier: "DHL" },
      });
      expect(receiver.requests.at(-1)!.headers["svc-webhook-test"]).to.equal("true");
      await page.getByLabel("Test event").selectOption("webhooks.test");
    });

    it("shows a failing delivery's retries, each attempt with its status, its answer's excerpt and its time with the zone", async () => {
      receiver.respond = (_req, res) =>
        res
          .writeHead(500, { "content-type": "text/plain", "x-request-id": "req-500" })
          .end("down for maintenance");
      const sent = await event(tenantA.uid, "order_paid", { orderId: "ord_1", amount: 12 });
      expect(sent.status, sent.text).to.equal(202);
      failedWebhook = sent.body.data.deliveries[0].webhookID;
      await page.getByRole("heading", { name: "Deliveries", exact: true }).waitFor();
      const row = deliveryRowOf(page, failedWebhook);
      await row.locator(".status", { hasText: "failed" }).waitFor({ timeout: 60_000 });
      expect(await row.locator(".attempt-count").textContent()).to.equal("3");
      expect(await row.locator(".status-code").textContent()).to.equal("500");
      await fits(page, "endpoint");
      await page.screenshot({ path: `${SHOTS}/endpoint.png` });
      await row.getByRole("link").click();
      await page.locator(".delivery-status", { hasText: "failed" }).waitFor();
      const attempts = page.locator("ol.attempts li.attempt");
      expect(await attempts.locator(".status-code").allTextContents()).to.deep.equal(["500", "500", "500"]);
      // Each failed attempt shows what the endpoint answered (open), with the headers kept.
      expect(await attempts.locator("pre.response-body").allTextContents()).to.deep.equal(
        Array(3).fill("down for maintenance"),
      );
      expect(await attempts.first().locator("table.headers").textContent()).to.include("req-500");
      // Times name their zone: the attempt's own time in the browser's zone.
      const stored = (await api.call("GET", `/webhooks/${failedWebhook}`)).body.data;
      const firstTime = attempts.first().locator(".attempt-line time");
      expect(await firstTime.getAttribute("datetime")).to.equal(stored.attempts[0].createdAt);
      expect(await firstTime.textContent()).to.equal(shown(stored.attempts[0].createdAt));
      expect(await firstTime.textContent()).to.match(/ (EST|EDT)$/);
      const payload = JSON.parse((await page.locator("pre.payload").textContent()) ?? "");
      expect(payload).to.deep.include({ type: "shop.order_paid", payload: { orderId: "ord_1", amount: 12 } });
      await fits(page, "delivery");
      await page.screenshot({ path: `${SHOTS}/delivery.png` });
    });

    it("shows the last attempt's headers with the values sent: the signature verifies", async () => {
      // The last table of headers on the screen: the sent ones, after each attempt's answer.
      const sent: Record<string, string> = {};
      for (const row of await page.locator("table.headers").last().locator("tr").all())
        sent[(await row.locator("th").textContent()) ?? ""] = (await row.locator("td").textContent()) ?? "";
      const header = (name: string) => sent[name];
      const last = receiver.requests.filter((r) => r.headers["svc-webhook-id"] === failedWebhook).at(-1)!;
      expect(header("svc-webhook-timestamp")).to.equal(last.headers["svc-webhook-timestamp"]);
      expect(header("svc-webhook-signature")).to.equal(last.headers["svc-webhook-signature"]);
      await page.locator("summary", { hasText: "Exact body" }).click();
      const body = (await page.locator("pre.payload-raw").textContent()) ?? "";
      expect(body).to.equal(last.body);
      const secret = (await api.call("GET", `/configs/${configId}/secret`)).body.data.secret as string;
      const fromPage = {
        path: "/",
        at: 0,
        body,
        headers: {
          "svc-webhook-id": header("svc-webhook-id"),
          "svc-webhook-timestamp": header("svc-webhook-timestamp"),
          "svc-webhook-signature": header("svc-webhook-signature"),
        },
      };
      expect(signedWith(secret, fromPage)).to.equal(true);
    });

    it("replays the failed delivery, which now succeeds; the notice stays behind on the original", async () => {
      receiver.respond = (_req, res) => res.writeHead(200).end("ok");
      await page.getByRole("button", { name: "Replay" }).click();
      await page.getByRole("link", { name: "open the new delivery" }).click();
      await page.locator(".delivery-status", { hasText: "success" }).waitFor({ timeout: 60_000 });
      expect(await page.getByRole("link", { name: failedWebhook }).count()).to.equal(1);
      expect(await page.getByText("Replay started").count()).to.equal(0);
      expect(await page.getByRole("link", { name: "open the new delivery" }).count()).to.equal(0);
    });

    it("shows the current secret on request, the one the API holds, and hides it again", async () => {
      await page.goto(`${base(page)}#/endpoints/${configId}`);
      expect(await page.locator("#current-secret").count()).to.equal(0); // not fetched unasked
      await page.getByRole("button", { name: "Show current secret" }).click();
      const revealed = await page.getByLabel("Current secret").inputValue();
      const held = (await api.call("GET", `/configs/${configId}/secret`)).body.data.secret as string;
      expect(revealed).to.equal(held);
      await page.getByRole("button", { name: "Hide secret" }).click();
      expect(await page.locator("#current-secret").count()).to.equal(0);
    });

    it("rotates the secret, shown once, and the next delivery verifies with the new one only", async () => {
      const old = (await api.call("GET", `/configs/${configId}/secret`)).body.data.secret as string;
      await page.goto(`${base(page)}#/endpoints/${configId}`);
      await page.getByLabel("Old secret").selectOption("");
      await page.getByRole("button", { name: "Rotate secret" }).click();
      const fresh = await page.getByLabel(/New secret/).inputValue();
      expect(fresh)
        .to.match(/^[A-Za-z0-9+/]{32}$/)
        .and.not.equal(old);
      expect(await page.getByText("The old secret no longer signs deliveries.").count()).to.equal(1);
      await page.locator("summary", { hasText: "Python" }).click();
      await page.locator("#secret-title").scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${SHOTS}/secret.png` });
      const sent = await event(tenantA.uid, "order_paid", { orderId: "ord_2", amount: 5 });
      const webhookId = sent.body.data.deliveries[0].webhookID as string;
      const deadline = Date.now() + 30_000;
      while (!receiver.requests.some((r) => r.headers["svc-webhook-id"] === webhookId)) {
        if (Date.now() > deadline) throw new Error("the delivery after the rotation never came");
        await new Promise((r) => setTimeout(r, 100));
      }
      const received = receiver.requests.find((r) => r.headers["svc-webhook-id"] === webhookId)!;
      expect(signedWith(fresh, received)).to.equal(true);
      expect(signedWith(old, received)).to.equal(false);
    });

    it("starts a bulk recovery over a window and shows its progress until done", async () => {
      // One more delivery that ends failed (the replayed one is carried on by its replay).
      receiver.respond = (_req, res) => res.writeHead(503).end("maintenance");
      const sent = await event(tenantA.uid, "order_paid", { orderId: "ord_3", amount: 7 });
      const webhookId = sent.body.data.deliveries[0].webhookID as string;
      const row = deliveryRowOf(page, webhookId);
      await row.locator(".status", { hasText: "failed" }).waitFor({ timeout: 60_000 });
      receiver.respond = (_req, res) => res.writeHead(200).end("ok");
      await page.getByLabel("Failed since").fill("2020-01-01T00:00");
      await page.getByRole("button", { name: "Start recovery" }).click();
      const recovery = page.locator("table.recoveries tbody tr").first();
      await recovery.locator(".recovery-state", { hasText: "done" }).waitFor({ timeout: 60_000 });
      const cells = await recovery.locator("td").allTextContents();
      expect(cells[2]).to.equal("1"); // the one failed delivery
      expect(cells[3]).to.equal("1"); // replayed once
      await page.locator("#recovery-title").scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${SHOTS}/recovery.png` });
      const replay = page
        .locator("table.deliveries tbody tr", { hasText: "replay" })
        .filter({ hasText: "success" });
      await replay.nth(1).waitFor();
    });

    it("filters the deliveries by status and by event type on the server", async () => {
      const statuses = () => page.locator("table.deliveries tbody tr td.status").allTextContents();
      const types = () => page.locator("table.deliveries tbody tr .event-type").allTextContents();
      const settled = async (check: () => Promise<boolean>) => {
        const deadline = Date.now() + 15_000;
        while (!(await check())) {
          if (Date.now() > deadline) throw new Error("the deliveries list never showed the filtered rows");
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      const all = await statuses();
      expect(all).to.include("failed").and.to.include("success");
      await page.getByLabel("Status").selectOption("failed");
      await settled(async () => (await statuses()).every((s) => s === "failed"));
      // The replayed deliveries, carried on by their replays, are the only failed ones.
      expect((await statuses()).length).to.equal(2);
      await page.getByLabel("Status").selectOption("");
      await page.getByLabel("Event type").selectOption("webhooks.test");
      await settled(async () => {
        const t = await types();
        return t.length > 0 && t.every((x) => x === "webhooks.test");
      });
      expect(await statuses()).to.deep.equal(["success"]); // the one default test event
      await page.getByLabel("Status").selectOption("failed");
      await page.getByText("No deliveries.").waitFor();
      await page.getByLabel("Event type").selectOption("");
      await page.getByLabel("Status").selectOption("");
      await settled(async () => (await statuses()).length === all.length);
    });

    it("loads older deliveries with Load more, 50 at a time", async () => {
      for (let i = 0; i < 50; i++) {
        const sent = await api.call("POST", `/configs/${configId}/test`);
        expect(sent.status, sent.text).to.equal(200);
      }
      const total = (await api.call("GET", `/configs/${configId}/deliveries?pageSize=1000`)).body.cursor.data
        .length as number;
      expect(total).to.be.greaterThan(50);
      const rows = page.locator("table.deliveries tbody tr");
      await page.getByRole("button", { name: "Refresh" }).click();
      await page.getByRole("button", { name: "Load more" }).waitFor();
      expect(await rows.count()).to.equal(50);
      await page.getByRole("button", { name: "Load more" }).click();
      await page.getByRole("button", { name: "Load more" }).waitFor({ state: "detached" });
      expect(await rows.count()).to.equal(total);
      const ids = await Promise.all((await rows.all()).map((row) => row.getAttribute("data-webhook")));
      expect(new Set(ids).size).to.equal(total);
    });

    it("shows the endpoint's health in the list", async () => {
      await page.getByRole("link", { name: "← Endpoints" }).click();
      const row = page.locator("table.list tbody tr", { hasText: "Orders" });
      await row.getByText(/^\d+(\.\d)? %/).waitFor(); // the health arrives after the list
      const text = await row.textContent();
      expect(text)
        .to.match(/\d+(\.\d)? %/)
        .and.to.match(/\d+ sends/);
      await fits(page, "endpoints");
      await page.screenshot({ path: `${SHOTS}/endpoints.png` });
    });
  });

  describe(`on a phone (${PHONE.width}×${PHONE.height}): every screen fits its width`, () => {
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      ({ context, page } = await open(await createSession(api, `uid:${tenantA.uid}`), PHONE));
    });
    after(() => context?.close());

    it("lists the endpoints as stacked rows", async () => {
      const row = page.locator("table.list tbody tr", { hasText: "Orders" });
      await row.getByText(/^\d+(\.\d)? %/).waitFor();
      await fits(page, "endpoints");
      await page.screenshot({ path: `${SHOTS}/endpoints-phone.png`, fullPage: true });
    });

    it("shows an endpoint with its test event, deliveries, recoveries and secret", async () => {
      await page.goto(`${base(page)}#/endpoints/${ordersId}`);
      await page.getByRole("button", { name: "Send test event" }).click();
      await page.locator(".test-result", { hasText: "success" }).waitFor();
      await page.locator("table.recoveries tbody tr").first().waitFor();
      await page.getByRole("button", { name: "Show current secret" }).click();
      await page.getByLabel("Current secret").waitFor();
      await fits(page, "endpoint");
      await page.screenshot({ path: `${SHOTS}/endpoint-phone.png` }); // the top: a full page holds 50 deliveries
    });

    it("shows a failed delivery with its attempts' answers and the headers sent", async () => {
      await page.goto(`${base(page)}#/deliveries/${failedWebhook}`);
      await page.locator("pre.response-body").first().waitFor();
      await page.locator("table.headers").last().waitFor();
      await fits(page, "delivery");
      await page.screenshot({ path: `${SHOTS}/delivery-phone.png`, fullPage: true });
    });

    it("shows the endpoint form with an example, a header and every auth field", async () => {
      await page.goto(`${base(page)}#/endpoints/new`);
      await page.getByLabel("shop.order_paid").check();
      await page.getByRole("button", { name: "Add header" }).click();
      await page.getByLabel("Kind").selectOption("oauth2");
      await page.getByLabel("Use mutual TLS").check();
      await page.getByLabel("Client certificate (PEM)").waitFor();
      await fits(page, "form");
      await page.screenshot({ path: `${SHOTS}/endpoint-form-phone.png`, fullPage: true });
      await page.goto(`${base(page)}#/endpoints/${ordersId}/edit`);
      await page.getByRole("button", { name: "Save endpoint" }).waitFor();
      await fits(page, "edit form");
    });

    it("says not found for an endpoint that is not there", async () => {
      await page.goto(`${base(page)}#/endpoints/00000000-0000-4000-8000-000000000000`);
      await page.getByRole("heading", { name: "Not found" }).waitFor();
      await fits(page, "not found");
      errorAnswers(page, 404);
    });
  });

  describe("editing, disabling, enabling and deleting an endpoint", () => {
    let context: BrowserContext;
    let page: Page;
    let id = "";
    let secret = "";

    before(async () => {
      const created = await api.call("POST", "/configs", {
        endpoint: `${receiver.url}?edit=1`,
        eventTypes: ["shop.order_paid"],
        tenantId: tenantA.id,
        name: "Before edit",
        filter: { "payload.amount": { $gte: 100 } },
        auth: { headers: [{ name: "X-Api-Key", value: "k-1" }] },
      });
      id = created.body.data.id;
      secret = created.body.data.secret;
      ({ context, page } = await open(await createSession(api, `uid:${tenantA.uid}`)));
      await page.getByRole("link", { name: "Before edit" }).click();
      await page.getByRole("heading", { name: "Before edit" }).waitFor();
    });
    after(() => context?.close());

    it("edits the name and the signature header names, and keeps the secret, filter and header value", async () => {
      await page.getByRole("link", { name: "Edit" }).click();
      await page.getByLabel("Name (optional)").fill("After edit");
      expect(await page.getByLabel("Signature headers").inputValue()).to.equal(""); // the deployment's
      await page.getByLabel("Signature headers").selectOption("standard");
      expect(await page.getByLabel("Value").inputValue()).to.equal(""); // write-only
      await page.getByRole("button", { name: "Save endpoint" }).click();
      await page.getByRole("heading", { name: "After edit" }).waitFor();
      const stored = (await api.call("GET", `/configs/${id}`)).body.data;
      expect(stored.name).to.equal("After edit");
      expect(stored.signatureHeaders).to.equal("standard");
      expect(stored.filter).to.deep.equal({ "payload.amount": { $gte: 100 } });
      expect((await api.call("GET", `/configs/${id}/secret`)).body.data.secret).to.equal(secret);
      expect(stored.auth.headers).to.deep.equal([{ name: "X-Api-Key", value: "********" }]);
    });

    it("asks for the header value again when the endpoint moves to another origin, and shows the API's refusal next to the headers", async () => {
      await page.getByRole("link", { name: "Edit" }).click();
      expect(await page.getByLabel("Value").getAttribute("placeholder")).to.equal("unchanged");
      expect(await page.getByLabel("Signature headers").inputValue()).to.equal("standard");
      // localhost and 127.0.0.1 are two origins (the same receiver, so deliveries still work).
      const moved = `${receiver.url.replace("127.0.0.1", "localhost")}?edit=1`;
      await page.getByLabel("Endpoint URL").fill(moved);
      await page.locator("#endpoint-moved").waitFor();
      expect(await page.getByLabel("Value").getAttribute("placeholder")).to.equal("");
      await page.getByRole("button", { name: "Save endpoint" }).click();
      const refusal = page.locator("#headers-error");
      await refusal.waitFor();
      expect(await refusal.textContent()).to.contain("auth.headers[0].value must be given again");
      expect((await api.call("GET", `/configs/${id}`)).body.data.endpoint).to.equal(`${receiver.url}?edit=1`);
      await page.getByLabel("Value").fill("k-2");
      await page.getByRole("button", { name: "Save endpoint" }).click();
      await page.getByRole("heading", { name: "After edit" }).waitFor();
      expect((await api.call("GET", `/configs/${id}`)).body.data.endpoint).to.equal(moved);
      expect((await api.call("GET", `/configs/${id}/secret`)).body.data.secret).to.equal(secret);
      errorAnswers(page, 400);
    });

    it("caps the sends at once, shows a refused cap next to its field, and removes the cap when cleared", async () => {
      const cap = page.getByLabel("Sends at once (optional)");
      const save = () => page.getByRole("button", { name: "Save endpoint" }).click();
      await page.getByRole("link", { name: "Edit" }).click();
      expect(await cap.inputValue()).to.equal("");
      await cap.fill("two");
      await save();
      expect(await page.locator("#maxConcurrency-error").textContent()).to.contain("not a whole number");
      await cap.fill("20000"); // past the API's bound: its 400 lands next to the field
      await save();
      await page.locator("#maxConcurrency-error", { hasText: "10000" }).waitFor();
      expect((await api.call("GET", `/configs/${id}`)).body.data.maxConcurrency).to.equal(undefined);
      await cap.fill("3");
      await save();
      await page.getByText("at most 3").waitFor();
      expect((await api.call("GET", `/configs/${id}`)).body.data.maxConcurrency).to.equal(3);
      await page.getByRole("link", { name: "Edit" }).click();
      expect(await cap.inputValue()).to.equal("3");
      await cap.fill("");
      await save();
      await page.getByRole("heading", { name: "After edit" }).waitFor();
      expect((await api.call("GET", `/configs/${id}`)).body.data.maxConcurrency).to.equal(undefined);
      errorAnswers(page, 400);
    });

    it("disables, enables and deletes it", async () => {
      await page.getByRole("button", { name: "Disable" }).click();
      await page.locator(".badge", { hasText: "Disabled" }).waitFor();
      expect((await api.call("GET", `/configs/${id}`)).body.data.active).to.equal(false);
      await page.getByRole("button", { name: "Enable" }).click();
      await page.locator(".badge", { hasText: "Enabled" }).waitFor();
      expect((await api.call("GET", `/configs/${id}`)).body.data.active).to.equal(true);
      await page.getByRole("button", { name: "Delete", exact: true }).click();
      await page.getByRole("button", { name: "Delete for good" }).click();
      await page.getByRole("heading", { name: "Endpoints" }).waitFor();
      expect((await api.call("GET", `/configs/${id}`)).status).to.equal(404);
    });
  });

  describe("OAuth 2.0 client credentials and mutual TLS in the endpoint form", () => {
    const tenantC = { uid: `initech-${suffix}`, id: "" };
    const client = { id: "portal-client", secret: `cs-${randomBytes(8).toString("hex")}` };
    const issued = new Set<string>();
    const tokenForms: URLSearchParams[] = [];
    let tokenServer: Server;
    let tokenUrl = "";
    let guarded: Receiver;
    let pki: TestPki;
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      pki = await makeTestPki();
      const created = await api.call("POST", "/tenants", { uid: tenantC.uid });
      tenantC.id = created.body.data.id;
      // The token service: client_secret_basic, grant client_credentials; each token it issues is valid.
      tokenServer = createServer((req, res) => {
        let body = "";
        req.on("data", (c) => {
          body += c;
        });
        req.on("end", () => {
          const form = new URLSearchParams(body);
          tokenForms.push(form);
          const basic = Buffer.from(`${client.id}:${client.secret}`).toString("base64");
          if (
            req.headers.authorization !== `Basic ${basic}` ||
            form.get("grant_type") !== "client_credentials"
          ) {
            res.writeHead(401, { "content-type": "application/json" }).end('{"error":"invalid_client"}');
            return;
          }
          const token = `at-${randomBytes(12).toString("hex")}`;
          issued.add(token);
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ access_token: token, token_type: "Bearer", expires_in: 3600 }));
        });
      });
      await new Promise<void>((resolve) => tokenServer.listen(0, "127.0.0.1", resolve));
      tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/oauth/token`;
      // The endpoint accepts only a bearer token the token service issued.
      guarded = await new Receiver().start();
      guarded.respond = (req, res) => {
        const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ""))?.[1] ?? "";
        res.writeHead(issued.has(token) ? 200 : 401).end();
      };
      ({ context, page } = await open(await createSession(api, `uid:${tenantC.uid}`)));
    });
    after(async () => {
      await context?.close();
      await guarded?.stop();
      await new Promise((resolve) => tokenServer?.close(resolve));
    });

    /** The error shown for an input: the element its aria-describedby names. */
    const errorFor = async (inputId: string) => {
      const input = page.locator(`[id="${inputId}"]`);
      await input.and(page.locator('[aria-invalid="true"]')).waitFor();
      const described = await input.getAttribute("aria-describedby");
      return page.locator(`[id="${described}"]`).textContent();
    };
    const configsOfC = async () =>
      (await api.call("GET", `/tenants/${tenantC.id}/configs`)).body.cursor.data as { id: string }[];

    it("creates an endpoint with OAuth 2.0 client credentials, shows its public parts, and a delivery gets the issued token", async () => {
      await page.getByRole("link", { name: "Add endpoint" }).click();
      await page.getByLabel("Endpoint URL").fill(guarded.url);
      await page.getByLabel("Name (optional)").fill("OAuth endpoint");
      await page.getByLabel("shop.order_refunded").check();
      await page.getByLabel("Kind").selectOption("oauth2");
      await page.getByLabel("Token URL").fill(tokenUrl);
      await page.getByLabel("Client ID").fill(client.id);
      await page.getByLabel("Client secret").fill(client.secret);
      await page.getByLabel("Scope (optional)").fill("webhooks:write");
      await page.getByLabel("Audience (optional)").fill("https://hooks.example.com");
      await page.getByLabel("Kind").scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${SHOTS}/endpoint-auth.png` });
      await page.getByRole("button", { name: "Create endpoint" }).click();
      await page.getByRole("heading", { name: "OAuth endpoint" }).waitFor();
      const configId = decodeURIComponent(page.url().split("#/endpoints/")[1]!);
      const facts = (await page.locator(".auth-facts").textContent()) ?? "";
      expect(facts)
        .to.include(tokenUrl)
        .and.to.include(client.id)
        .and.to.include("webhooks:write")
        .and.to.include("https://hooks.example.com")
        .and.not.to.include(client.secret);
      expect(await page.content()).not.to.include(client.secret);
      const stored = (await api.call("GET", `/configs/${configId}`)).body.data;
      expect(stored.auth.oauth2).to.deep.equal({
        tokenUrl,
        clientId: client.id,
        clientSecret: "********",
        scope: "webhooks:write",
        audience: "https://hooks.example.com",
      });

      const sent = await event(tenantC.uid, "order_refunded", { orderId: "ord_9" });
      expect(sent.status, sent.text).to.equal(202);
      const webhookId = sent.body.data.deliveries[0].webhookID as string;
      const row = deliveryRowOf(page, webhookId);
      await row.locator(".status", { hasText: "success" }).waitFor({ timeout: 60_000 });
      expect(await row.locator(".status-code").textContent()).to.equal("200");
      const received = guarded.requests.find((r) => r.headers["svc-webhook-id"] === webhookId)!;
      expect(issued.has(String(received.headers.authorization).slice("Bearer ".length))).to.equal(true);
      expect(tokenForms.at(-1)?.get("scope")).to.equal("webhooks:write");
      expect(tokenForms.at(-1)?.get("audience")).to.equal("https://hooks.example.com");
    });

    it("keeps the client secret when the edit leaves it blank, and shows a bad token URL's message next to it", async () => {
      await page.getByRole("link", { name: "Edit" }).click();
      expect(await page.getByLabel("Token URL").inputValue()).to.equal(tokenUrl);
      expect(await page.getByLabel("Client secret").inputValue()).to.equal(""); // write-only
      await page.getByLabel("Token URL").fill("ftp://auth.example.com/token");
      await page.getByRole("button", { name: "Save endpoint" }).click();
      expect(await errorFor("oauth-token-url")).to.include("oauth2.tokenUrl");
      await page.getByLabel("Token URL").fill(tokenUrl);
      await page.getByLabel("Scope (optional)").fill("");
      await page.getByRole("button", { name: "Save endpoint" }).click();
      await page.getByRole("heading", { name: "OAuth endpoint" }).waitFor();
      const [config] = await configsOfC();
      const stored = (await api.call("GET", `/configs/${config!.id}`)).body.data.auth.oauth2;
      expect(stored).to.include({ tokenUrl, clientSecret: "********" }).and.not.to.have.property("scope");
      errorAnswers(page, 400);
    });

    it("asks for the client secret again when the token URL changes, and shows the API's refusal next to it", async () => {
      await page.getByRole("link", { name: "Edit" }).click();
      const secretField = page.getByLabel("Client secret");
      expect(await secretField.getAttribute("placeholder")).to.equal("unchanged");
      const moved = `${tokenUrl}?realm=other`;
      await page.getByLabel("Token URL").fill(moved);
      expect(await secretField.getAttribute("placeholder")).not.to.equal("unchanged");
      await page.getByRole("button", { name: "Save endpoint" }).click();
      expect(await errorFor("oauth-client-secret")).to.include("oauth2.clientSecret must be given again");
      const [config] = await configsOfC();
      expect((await api.call("GET", `/configs/${config!.id}`)).body.data.auth.oauth2.tokenUrl).to.equal(
        tokenUrl,
      );
      // Back to the stored token URL: the blank secret keeps the stored one again.
      await page.getByLabel("Token URL").fill(tokenUrl);
      expect(await secretField.getAttribute("placeholder")).to.equal("unchanged");
      await page.getByRole("button", { name: "Save endpoint" }).click();
      await page.getByRole("heading", { name: "OAuth endpoint" }).waitFor();
      errorAnswers(page, 400);
    });

    it("stores a client certificate for mutual TLS, refusing a bad PEM next to its field", async () => {
      await page.getByRole("link", { name: "← Endpoints" }).click();
      await page.getByRole("link", { name: "Add endpoint" }).click();
      await page.getByLabel("Endpoint URL").fill(guarded.url);
      await page.getByLabel("Name (optional)").fill("mTLS endpoint");
      await page.getByLabel("shop.order_refunded").check();
      await page.getByLabel("Use mutual TLS").check();
      await page.getByLabel("Client certificate (PEM)").fill("not a certificate");
      await page.getByLabel("Private key (PEM)").fill(pki.clientKey);
      await page.getByRole("button", { name: "Create endpoint" }).click();
      expect(await errorFor("tls-certificate")).to.include("tls.certificate must hold PEM certificates");
      await page.getByLabel("Client certificate (PEM)").fill(pki.clientCert);
      await page.getByLabel("Private key (PEM)").fill(pki.otherKey);
      await page.getByRole("button", { name: "Create endpoint" }).click();
      expect(await errorFor("tls-private-key")).to.include("tls.privateKey does not match");
      expect(await configsOfC()).to.have.length(1); // nothing stored by the refused creations
      await page.getByLabel("Private key (PEM)").fill(pki.clientKey);
      await page.getByLabel("CA bundle (PEM, optional)").fill(pki.ca);
      await page.getByRole("button", { name: "Create endpoint" }).click();
      await page.getByRole("heading", { name: "mTLS endpoint" }).waitFor();
      expect(await page.locator(".tls-facts").textContent())
        .to.include("client certificate")
        .and.to.include("custom CA bundle");
      expect(await page.content()).not.to.include(pki.clientKey.split("\n")[1]!);
      const configId = decodeURIComponent(page.url().split("#/endpoints/")[1]!);
      const tls = (await api.call("GET", `/configs/${configId}`)).body.data.auth.tls;
      expect(tls).to.deep.equal({ certificate: pki.clientCert, privateKey: "********", caBundle: pki.ca });
      errorAnswers(page, 400);
    });
  });

  describe("a broker destination in the endpoint form", () => {
    const tenantD = { uid: `hooli-${suffix}`, id: "" };
    const password = `sasl-${randomBytes(8).toString("hex")}`;
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      tenantD.id = (await api.call("POST", "/tenants", { uid: tenantD.uid })).body.data.id;
      ({ context, page } = await open(await createSession(api, `uid:${tenantD.uid}`)));
      await page.getByRole("heading", { name: "Endpoints" }).waitFor();
    });
    after(() => context?.close());

    it("delivers to a Kafka topic: its fields replace the URL and HTTP auth, its errors show beside them, its password is write-only", async () => {
      await page.getByRole("link", { name: "Add endpoint" }).click();
      await page.getByLabel("Deliver to").selectOption("kafka");
      expect(await page.getByLabel("Endpoint URL").count()).to.equal(0);
      expect(await page.getByText("Custom headers").count()).to.equal(0);
      await page.getByLabel("Brokers (host:port, comma-separated)").fill("127.0.0.1:9092");
      await page.getByLabel("Name (optional)").fill("Kafka orders");
      await page.getByLabel("shop.order_paid").check();
      await page.getByRole("button", { name: "Create endpoint" }).click();
      await page
        .locator("#destination-error", { hasText: 'missing required field "destination.topic"' })
        .waitFor();
      errorAnswers(page, 400);
      await page.getByLabel("Topic", { exact: true }).fill("orders");
      await page.getByLabel("SASL", { exact: true }).selectOption("scram-sha-256");
      await page.getByLabel("SASL username").fill("app");
      await page.getByLabel("SASL password").fill(password);
      await page.getByRole("button", { name: "Create endpoint" }).click();
      await page.getByRole("heading", { name: "Kafka orders" }).waitFor();
      const id = decodeURIComponent(page.url().split("#/endpoints/")[1]!);
      const stored = (await api.call("GET", `/configs/${id}`)).body.data;
      expect(stored.endpoint).to.equal("kafka://127.0.0.1:9092/orders");
      expect(stored.destination).to.deep.equal({
        type: "kafka",
        brokers: ["127.0.0.1:9092"],
        topic: "orders",
        sasl: { mechanism: "scram-sha-256", username: "app" },
      });
      expect(await page.content()).not.to.include(password);
    });

    it("delivers to an SQS queue: queue URL and region, the access key's id and secret both write-only", async () => {
      const queueUrl = "http://127.0.0.1:9324/000000000000/orders";
      await page.goto(`${base(page)}#/endpoints/new`);
      await page.getByLabel("Deliver to").selectOption("sqs");
      expect(await page.getByLabel("Endpoint URL").count()).to.equal(0);
      await page.getByLabel("Queue URL (a name ending in .fifo: a FIFO queue)").fill(queueUrl);
      await page.getByLabel("Name (optional)").fill("SQS orders");
      await page.getByLabel("shop.order_paid").check();
      await page.getByLabel("Secret access key").fill(password);
      await page.getByRole("button", { name: "Create endpoint" }).click();
      await page
        .locator("#destination-error", { hasText: 'missing required field "destination.accessKeyId"' })
        .waitFor();
      errorAnswers(page, 400);
      await page.getByLabel("Access key ID").fill(`id-${password}`);
      await page.getByRole("button", { name: "Create endpoint" }).click();
      await page.getByRole("heading", { name: "SQS orders" }).waitFor();
      const id = decodeURIComponent(page.url().split("#/endpoints/")[1]!);
      const stored = (await api.call("GET", `/configs/${id}`)).body.data;
      expect(stored.endpoint).to.equal(`sqs+${queueUrl}`);
      expect(stored.destination).to.deep.equal({ type: "sqs", queueUrl, region: "us-east-1" });
      expect(await page.content()).not.to.include(password);
      // On edit, neither part of the key is shown; left blank, both are kept.
      await page.goto(`${base(page)}#/endpoints/${id}/edit`);
      expect(await page.getByLabel("Access key ID").inputValue()).to.equal("");
      expect(await page.getByLabel("Access key ID").getAttribute("placeholder")).to.equal("unchanged");
      await page.getByLabel("Region (blank: from the queue URL's host, else us-east-1)").fill("eu-west-1");
      await page.getByRole("button", { name: "Save endpoint" }).click();
      await page.getByRole("heading", { name: "SQS orders" }).waitFor();
      const edited = (await api.call("GET", `/configs/${id}`)).body.data;
      expect(edited.destination.region).to.equal("eu-west-1");
    });
  });

  describe("(b) catalog and payload filter", () => {
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      ({ context, page } = await open(await createSession(api, `uid:${tenantA.uid}`)));
      await page.getByRole("heading", { name: "Endpoints" }).waitFor();
      await page.getByRole("link", { name: "Add endpoint" }).click();
    });
    after(() => context?.close());

    it("shows the picked type's description and an example drawn from its schema", async () => {
      await page.getByText("An order was paid").waitFor();
      await page.getByLabel("shop.order_paid").check();
      const example = JSON.parse(
        (await page.locator('pre[data-example="shop.order_paid"]').textContent()) ?? "",
      );
      expect(example).to.deep.equal({ orderId: "ord_1042", amount: 1, currency: "EUR" });
      await page.screenshot({ path: `${SHOTS}/endpoint-form.png` });
    });

    it("shows the API's message for an invalid filter next to the filter field", async () => {
      await page.getByLabel("Endpoint URL").fill(receiver.url);
      await page
        .getByLabel("Payload filter (optional JSON)")
        .fill('{"payload.amount": {"$between": [1, 2]}}');
      const answer = page.waitForResponse(
        (r) => r.url().endsWith("/configs") && r.request().method() === "POST",
      );
      await page.getByRole("button", { name: "Create endpoint" }).click();
      const response = await answer;
      expect(response.status()).to.equal(400);
      const { errorMessage } = (await response.json()) as { errorMessage: string };
      const shown = page.locator("#filter-error");
      await shown.waitFor();
      expect(await shown.textContent()).to.equal(errorMessage);
      expect(errorMessage).to.include("$between");
      expect(
        await page.getByLabel("Payload filter (optional JSON)").getAttribute("aria-describedby"),
      ).to.equal("filter-error");
      errorAnswers(page, 400);
    });
  });

  describe("(c) isolation between tenants", () => {
    let bConfig = "";
    let bWebhook = "";
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      const created = await api.call("POST", "/configs", {
        endpoint: `${receiver.url}?tenant=b`,
        eventTypes: ["shop.order_paid"],
        tenantId: tenantB.id,
        name: "Globex secret endpoint",
      });
      bConfig = created.body.data.id;
      const sent = await event(tenantB.uid, "order_paid", { orderId: "globex-1", amount: 99 });
      bWebhook = sent.body.data.deliveries[0].webhookID;
      ({ context, page } = await open(await createSession(api, `uid:${tenantA.uid}`)));
      await page.getByRole("heading", { name: "Endpoints" }).waitFor();
    });
    after(() => context?.close());

    it("lists none of B's endpoints", async () => {
      await page.locator("table.list").waitFor();
      expect(await page.getByText("Globex secret endpoint").count()).to.equal(0);
      expect(await page.content()).not.to.include(bConfig);
    });

    it("says not found for B's endpoint opened by URL (the API answered 404) and lists none of its deliveries", async () => {
      const answer = page.waitForResponse((r) => r.url().endsWith(`/configs/${bConfig}`));
      await page.goto(`${base(page)}#/endpoints/${bConfig}`);
      expect((await answer).status()).to.equal(404);
      await page.getByRole("heading", { name: "Not found" }).waitFor();
      expect(await page.locator("table.deliveries").count()).to.equal(0);
      expect(await page.content()).not.to.include("globex-1");
      errorAnswers(page, 404);
    });

    it("says not found for B's delivery opened by URL", async () => {
      const answer = page.waitForResponse((r) => r.url().endsWith(`/webhooks/${bWebhook}`));
      await page.goto(`${base(page)}#/deliveries/${bWebhook}`);
      expect((await answer).status()).to.equal(404);
      await page.getByRole("heading", { name: "Not found" }).waitFor();
      expect(await page.content()).not.to.include("globex-1");
      errorAnswers(page, 404);
    });
  });

  describe("a link bringing another session into a tab that holds one", () => {
    it("asks before switching: staying keeps the session, switching opens the other tenant's", async () => {
      const own = await createSession(api, `uid:${tenantA.uid}`);
      const other = await createSession(api, `uid:${tenantB.uid}`);
      const { context, page } = await open(own);
      await page.locator("a.brand", { hasText: tenantA.uid }).waitFor();
      // Loaded in the same tab (a link followed from elsewhere), and then as a fragment change.
      for (const follow of [
        () => page.goto(other.url),
        () => page.evaluate(`window.location.hash = ${JSON.stringify(new URL(other.url).hash)}`),
      ]) {
        await follow();
        await page.getByRole("heading", { name: "Open another session?" }).waitFor();
        await page.getByText(`${tenantB.uid} Inc.`).first().waitFor();
        expect(page.url()).to.not.include("token=");
        await page.getByRole("button", { name: `Stay in ${tenantA.uid} Inc.` }).click();
        await page.locator("a.brand", { hasText: tenantA.uid }).waitFor();
      }
      await page.goto(other.url);
      await page.getByRole("button", { name: `Switch to ${tenantB.uid} Inc.` }).waitFor();
      await page.screenshot({ path: `${SHOTS}/session-switch.png` });
      // On a phone: nothing wider than the screen.
      await page.setViewportSize(PHONE);
      await fits(page, "session switch");
      await page.screenshot({ path: `${SHOTS}/session-switch-phone.png` });
      await page.setViewportSize(VIEWPORT);
      await page.getByRole("button", { name: `Switch to ${tenantB.uid} Inc.` }).click();
      await page.locator("a.brand", { hasText: tenantB.uid }).waitFor();
      // The same token again is no question.
      await page.goto(other.url);
      await page.locator("a.brand", { hasText: tenantB.uid }).waitFor();
      expect(await page.getByRole("heading", { name: "Open another session?" }).count()).to.equal(0);
      expect(errorsOf.get(page)).to.deep.equal([]);
      await context.close();
    });
  });

  describe("(d) expired and revoked sessions, at 1 280 px and on a phone", () => {
    /** The ended page: its title, its own wording, no stack trace, nothing wider than the screen; the 401s it was shown for. */
    async function ended(page: Page, title: string, says: RegExp) {
      await page.getByRole("heading", { name: title }).waitFor();
      const text = (await page.locator("main.ended").textContent()) ?? "";
      expect(text).to.match(says);
      expect(await page.content()).not.to.match(/at \w+ \(|Error:/);
      await fits(page, title);
      errorAnswers(page, 401);
      expect(pageErrors(page)).to.deep.equal([]);
      return text;
    }
    const phone = (v: { width: number }) => (v.width === PHONE.width ? "-phone" : "");

    for (const viewport of [VIEWPORT, PHONE]) {
      it(`shows the expired page for an expired session (${viewport.width} px)`, async () => {
        const session = await createSession(api, `uid:${tenantA.uid}`, { expiresIn: "1s" });
        // Wait until the API itself says expired, then open the link.
        for (;;) {
          const answer = await fetch(`${api.url}/portal-sessions/current`, {
            headers: { authorization: `Bearer ${session.token}` },
          });
          if (answer.status === 401) break;
          await new Promise((r) => setTimeout(r, 200));
        }
        const { context, page } = await open(session, viewport);
        await ended(page, "This session has expired", /work for a limited time/);
        await page.screenshot({ path: `${SHOTS}/expired${phone(viewport)}.png` });
        expect(await axeViolations(page)).to.deep.equal([]);
        await context.close();
      });

      it(`shows the revoked page, in its own words, when the session is revoked while the page is open (${viewport.width} px)`, async () => {
        const session = await createSession(api, `uid:${tenantA.uid}`);
        const { context, page } = await open(session, viewport);
        // Opened while the session is live; then revoked.
        await page.locator("table.list, .empty").first().waitFor();
        const revoked = await api.call("DELETE", `/tenants/uid:${tenantA.uid}/portal-sessions/${session.id}`);
        expect(revoked.status).to.equal(204);
        // The next call the page makes (here: the new-endpoint screen's catalog) answers 401.
        await page.goto(`${base(page)}#/endpoints/new`);
        const text = await ended(page, "This session was revoked", /ended this session before its time/);
        expect(text).not.to.match(/limited time/); // the expiry's wording
        await page.reload();
        await page.getByRole("heading", { name: /session/ }).waitFor();
        expect(await page.getByRole("heading", { name: "This session was revoked" }).count()).to.equal(1);
        await ended(page, "This session was revoked", /ended this session before its time/);
        await context.close();
      });

      it(`shows the invalid-link page for a link without a valid token (${viewport.width} px)`, async () => {
        const session = await createSession(api, `uid:${tenantA.uid}`);
        const { context, page } = await open({ ...session, url: `${session.url}x` }, viewport);
        const text = await ended(page, "This link is not valid", /not made for this portal/);
        expect(text).not.to.match(/limited time/);
        await context.close();
      });
    }
  });

  describe("features the session lacks hide their screens and buttons", () => {
    it("shows endpoints and deliveries only, without test events, replay, recovery or secrets; an edit keeps the secret", async () => {
      const { context, page } = await open(
        await createSession(api, `uid:${tenantA.uid}`, { features: ["endpoints", "deliveries"] }),
      );
      await page.getByRole("link", { name: "Orders" }).click();
      await page.getByRole("heading", { name: "Deliveries", exact: true }).waitFor();
      for (const name of ["Send test event", "Rotate secret", "Start recovery"])
        expect(await page.getByRole("button", { name }).count(), name).to.equal(0);
      expect(await page.getByRole("button", { name: "Disable" }).count()).to.equal(1);
      // Editing needs "endpoints" only: the API keeps the secret for a session without "secrets".
      const id = decodeURIComponent(page.url().split("#/endpoints/")[1]!);
      const secret = (await api.call("GET", `/configs/${id}/secret`)).body.data.secret;
      const before = (await api.call("GET", `/configs/${id}`)).body.data.updatedAt;
      await page.getByRole("link", { name: "Edit" }).click();
      await page.getByRole("button", { name: "Save endpoint" }).click();
      await page.getByRole("heading", { name: "Deliveries", exact: true }).waitFor();
      expect((await api.call("GET", `/configs/${id}`)).body.data.updatedAt).not.to.equal(before);
      expect((await api.call("GET", `/configs/${id}/secret`)).body.data.secret).to.equal(secret);
      await deliveryRow(page, "success").first().getByRole("link").click();
      await page.locator("ol.attempts").waitFor();
      expect(await page.getByRole("button", { name: "Replay" }).count()).to.equal(0);
      await context.close();
    });
  });

  describe("(e) keyboard only, and an accessibility scan of each main screen", () => {
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      ({ context, page } = await open(await createSession(api, `uid:${tenantA.uid}`)));
      await page.getByRole("heading", { name: "Endpoints" }).waitFor();
    });
    after(() => context?.close());

    it("completes the create-endpoint form without the mouse", async () => {
      await tabTo(page, /^Add endpoint$/);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Add endpoint" }).waitFor();
      // The route change moved focus to the new screen, so the next Tab enters the form,
      // where the destination comes first (HTTP, the default, keeps the URL next).
      expect(await page.evaluate("document.activeElement.id")).to.equal("main");
      await tabTo(page, /^Deliver to$/, 1);
      await tabTo(page, /^Endpoint URL$/, 1);
      await page.keyboard.type(`${receiver.url}?kbd=1`);
      await page.keyboard.press("Tab");
      await page.keyboard.type("Keyboard");
      await tabTo(page, /shop\.order_refunded/);
      await page.keyboard.press("Space");
      await tabTo(page, /^Add header$/);
      await page.keyboard.press("Enter");
      await tabTo(page, /^Header name$/);
      await page.keyboard.type("X-Team");
      await page.keyboard.press("Tab");
      await page.keyboard.type("payments");
      await tabTo(page, /^Kind$/);
      await page.keyboard.press("ArrowDown"); // basic
      await page.keyboard.press("ArrowDown"); // bearer
      await tabTo(page, /^Token$/);
      await page.keyboard.type("kbd-token");
      await tabTo(page, /^Create endpoint$/);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Keyboard" }).waitFor();
      const id = decodeURIComponent(page.url().split("#/endpoints/")[1]!);
      const stored = (await api.call("GET", `/configs/${id}`)).body.data;
      expect(stored.eventTypes).to.deep.equal(["shop.order_refunded"]);
      expect(stored.auth.headers).to.deep.equal([{ name: "X-Team", value: "********" }]);
      expect(stored.auth.bearer).to.deep.equal({ token: "********" });
    });

    let authEndpoint = "";
    it("completes the OAuth 2.0 and mutual TLS fields without the mouse", async () => {
      const pki = await makeTestPki();
      const previous = page.url(); // the endpoint created by the previous test, for the scan below
      await page.goto(`${base(page)}#/endpoints/new`);
      await page.getByRole("heading", { name: "Add endpoint" }).waitFor();
      await tabTo(page, /^Endpoint URL$/);
      await page.keyboard.type(`${receiver.url}?kbd=2`);
      await page.keyboard.press("Tab");
      await page.keyboard.type("Keyboard OAuth");
      await tabTo(page, /shop\.order_refunded/);
      await page.keyboard.press("Space");
      await tabTo(page, /^Kind$/);
      for (let i = 0; i < 3; i++) await page.keyboard.press("ArrowDown"); // basic, bearer, oauth2
      await tabTo(page, /^Token URL$/);
      await page.keyboard.type("http://127.0.0.1:9/oauth/token");
      await page.keyboard.press("Tab");
      await page.keyboard.type("kbd-client");
      await page.keyboard.press("Tab");
      await page.keyboard.type("kbd-secret");
      await tabTo(page, /^Use mutual TLS/);
      await page.keyboard.press("Space");
      await tabTo(page, /^Client certificate \(PEM\)$/);
      await page.keyboard.insertText(pki.clientCert);
      await page.keyboard.press("Tab");
      await page.keyboard.insertText(pki.clientKey);
      await tabTo(page, /^Create endpoint$/);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Keyboard OAuth" }).waitFor();
      authEndpoint = decodeURIComponent(page.url().split("#/endpoints/")[1]!);
      const stored = (await api.call("GET", `/configs/${authEndpoint}`)).body.data;
      expect(stored.auth.oauth2).to.include({ clientId: "kbd-client", clientSecret: "********" });
      expect(stored.auth.tls).to.deep.equal({ certificate: pki.clientCert, privateKey: "********" });
      await page.goto(previous);
    });

    it("has no serious or critical axe violation on the endpoint, list, form and delivery screens", async () => {
      const found: Record<string, string[]> = {};
      const scan = async (screen: string) => {
        found[screen] = (await axeViolations(page)).map((v) => `${v.id}: ${v.help}`);
      };
      await page.locator(".test-event").waitFor();
      await page.getByRole("button", { name: "Send test event" }).click();
      await page.locator(".test-result").waitFor();
      await scan("endpoint");
      await deliveryRow(page, "success").first().getByRole("link").click();
      await page.locator("ol.attempts").waitFor();
      await scan("delivery");
      await page.goto(`${base(page)}#/`);
      await page.locator("table.list").waitFor();
      await scan("endpoints");
      await page.getByRole("link", { name: "Add endpoint" }).click();
      await page.getByLabel("shop.order_paid").check();
      await scan("form");
      // The OAuth and mutual-TLS fields, with an API error shown next to one.
      await page.getByLabel("Endpoint URL").fill(receiver.url);
      await page.getByLabel("Kind").selectOption("oauth2");
      await page.getByLabel("Use mutual TLS").check();
      await page.getByLabel("Client certificate (PEM)").fill("not a certificate");
      await page.getByRole("button", { name: "Create endpoint" }).click();
      await page.locator(".field-error").first().waitFor();
      await scan("form-auth");
      await page.goto(`${base(page)}#/endpoints/${authEndpoint}`);
      await page.locator(".tls-facts").waitFor();
      await scan("endpoint-auth");
      expect(found).to.deep.equal({
        endpoint: [],
        delivery: [],
        endpoints: [],
        form: [],
        "form-auth": [],
        "endpoint-auth": [],
      });
      errorAnswers(page, 400);
    });
  });
});
