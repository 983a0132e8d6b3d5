import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client, Connection } from "@temporalio/client";
import { expect } from "chai";
import { connect, type NatsConnection } from "nats";
import pg from "pg";
import { type DevServer, startDevServer } from "../../common/temporal-dev-server.js";
import { searchAttributeCliArgs } from "../../workflows/search-attributes.js";
import { freePort } from "../support/ports.js";
import { PrivatePostgres } from "../support/private-postgres.js";
import { ServiceProcess } from "../support/process.js";
import { Receiver } from "../support/receiver.js";

/**
 * Temporal (persisted to its SQLite file) and PostgreSQL restarted in the
 * middle of deliveries that are waiting to retry: nothing is lost, they resume.
 */
describe("restarting Temporal and the database during deliveries", function () {
  this.timeout(240_000);
  let postgres: PrivatePostgres;
  let temporal: DevServer;
  let serve: ServiceProcess;
  let receiver: Receiver;
  let nats: NatsConnection;
  const topic = `events-${randomBytes(4).toString("hex")}`;
  const stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;

  after(async () => {
    await serve?.stop();
    await temporal?.stop();
    await postgres?.stop().catch(() => {}); // already stopped
    await receiver?.stop();
    await (await nats?.jetstreamManager())?.streams.delete(stream).catch(() => {});
    await nats?.close();
  });

  it("completes every delivery with its attempts intact", async () => {
    postgres = await PrivatePostgres.create();
    const temporalDir = await mkdtemp(path.join(tmpdir(), "etp-temporal-restart-"));
    const temporalOpts = {
      port: await freePort(),
      searchAttributes: searchAttributeCliArgs(),
      headless: true,
      dbFile: path.join(temporalDir, "dev.db"),
      logFile: path.join(temporalDir, "server.log"),
    };
    temporal = await startDevServer(temporalOpts);
    receiver = await new Receiver().start();
    receiver.respond = (_req, res) => res.writeHead(503).end();
    const port = await freePort();
    serve = new ServiceProcess("webhooks", [
      "serve",
      "--worker",
      "--auto-migrate",
      "--listen",
      `127.0.0.1:${port}`,
      "--storage-sqldb-conn-string",
      postgres.url,
      "--temporal-address",
      temporal.address,
      "--broker-topics",
      topic,
      "--nats-stream",
      stream,
      "--audit-topic",
      "",
      "--min-backoff-delay",
      "3s",
      "--max-backoff-delay",
      "3s",
    ]);
    const api = `http://127.0.0.1:${port}`;
    await serve.waitHealthy(`${api}/_healthcheck`);
    const created = await fetch(`${api}/configs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ endpoint: receiver.url, eventTypes: ["ledger.restart"] }),
    }).then((r) => r.json() as Promise<{ data: { id: string } }>);
    nats = await connect({ servers: "nats://127.0.0.1:4222" });
    const keys = [1, 2, 3, 4, 5].map((i) => `restart-${i}-${randomBytes(3).toString("hex")}`);
    for (const key of keys) {
      await nats
        .jetstream()
        .publish(topic, JSON.stringify({ idempotency_key: key, app: "ledger", type: "restart" }));
    }
    await receiver.waitFor(keys.length);

    // Both go down while every delivery waits on its retry timer.
    await temporal.stop();
    await postgres.stop();
    await new Promise((r) => setTimeout(r, 2000));
    const health = await fetch(`${api}/_healthcheck`);
    expect(health.status).to.equal(503);
    await postgres.start();
    temporal = await startDevServer(temporalOpts);
    receiver.respond = (_req, res) => res.writeHead(200).end();

    const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
    try {
      for (const key of keys) {
        const result = await client.workflow.getHandle(`delivery:${created.data.id}:${key}`).result();
        expect(result.status, key).to.equal("success");
      }
    } finally {
      await client.connection.close();
    }
    const db = new pg.Client({ connectionString: postgres.url });
    await db.connect();
    const { rows } = await db.query(
      "SELECT webhook_id, array_agg(status_code ORDER BY retry_attempt) AS codes FROM attempts GROUP BY webhook_id",
    );
    await db.end();
    expect(rows).to.have.length(keys.length);
    for (const r of rows) {
      expect(r.codes[0]).to.equal(503);
      expect(r.codes.at(-1)).to.equal(200);
    }
  });
});
