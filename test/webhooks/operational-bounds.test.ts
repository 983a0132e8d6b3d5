import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { AckPolicy, connect, DeliverPolicy, nanos, RetentionPolicy } from "nats";
import { DeliveryEnv } from "../support/delivery-env.js";
import { lockConfigs, sql } from "../support/poison.js";
import { runCommand } from "../support/process.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

describe("operational bounds: stream limits, database timeouts, shutdown drain", function () {
  this.timeout(180_000);

  describe("flags", () => {
    it("documents the bounds with their defaults in --help", async () => {
      const r = await runCommand("webhooks", ["worker", "--help"]);
      const help = r.stdout.replace(/\s+/g, " ");
      for (const [flag, def] of [
        ["--broker-max-deliveries", "6"],
        ["--broker-redelivery-backoff", "5s,30s,2m,10m,30m"],
        ["--broker-stuck-after", "1m"],
        ["--nats-stream-max-age", "168h"],
        ["--nats-stream-max-bytes", "1GiB"],
        ["--nats-stream-max-msgs", "0"],
        ["--storage-sqldb-pool-size", "10"],
        ["--storage-sqldb-connect-timeout", "10s"],
        ["--storage-sqldb-statement-timeout", "30s"],
        ["--shutdown-grace", "30s"],
      ]) {
        expect(help).to.match(new RegExp(`${flag} <\\w+> ((?!--).)*\\(default: "?${def}"?\\)`), flag);
      }
    });

    for (const [flag, value, message] of [
      ["--broker-max-deliveries", "0", 'expected a positive integer, got "0"'],
      ["--broker-redelivery-backoff", "1s,,2m", 'expected durations separated by commas such as "5s,30s,2m"'],
      ["--broker-redelivery-backoff", "1s,0", 'expected a positive duration such as "3s", got "0"'],
      ["--broker-stuck-after", "-1s", 'expected 0 or a positive duration such as "3s", got "-1s"'],
      ["--shutdown-grace", "0", 'expected a positive duration such as "3s", got "0"'],
      ["--nats-stream-max-msgs", "-5", 'expected 0 or a positive integer, got "-5"'],
      [
        "--nats-stream-max-bytes",
        "lots",
        'expected a size such as "1GiB", "512MB" or a number of bytes, got "lots"',
      ],
      [
        "--storage-sqldb-statement-timeout",
        "-1s",
        'expected 0 or a positive duration such as "3s", got "-1s"',
      ],
      ["--storage-sqldb-pool-size", "0", 'expected a positive integer, got "0"'],
    ]) {
      it(`rejects ${flag} ${value} naming the flag`, async () => {
        const r = await runCommand("webhooks", ["worker", flag!, value!]);
        expect(r.code).to.equal(1);
        expect(r.stderr).to.include(flag);
        expect(r.stderr).to.include(message);
      });
    }
  });

  describe("JetStream stream limits", () => {
    const suffix = randomBytes(4).toString("hex");
    const ours = `TEST_LIMITS_${suffix.toUpperCase()}`;
    const operators = `TEST_OPERATOR_${suffix.toUpperCase()}`;
    const events = `events-limits-${suffix}`;
    const provisioned = `provisioned-${suffix}`;
    const audit = `audit-limits-${suffix}`;

    it("brings the stream it manages to the flags' limits and an earlier durable consumer to the redelivery flags, bounds the audit trail, leaves an operator's stream alone", async () => {
      const nc = await connect({ servers: "nats://127.0.0.1:4222" });
      const jsm = await nc.jetstreamManager();
      // As earlier versions created it: no limits at all.
      await jsm.streams.add({ name: ours, subjects: [events], retention: RetentionPolicy.Limits });
      await jsm.streams.add({ name: operators, subjects: [provisioned], retention: RetentionPolicy.Limits });
      // The durable consumer as an earlier version created it: its own max_deliver, ack wait
      // and a JetStream backoff (which unacknowledged messages no longer get: core/broker/nats-setup.ts).
      const durable = `limits-${suffix}-${events}`;
      await jsm.consumers.add(ours, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: events,
        max_deliver: 6,
        ack_wait: nanos(5000),
        backoff: [nanos(5000), nanos(30_000)],
        max_ack_pending: 256,
      });
      const api = await startWebhooks({
        worker: true,
        args: [
          ...["--broker-topics", `${events},${provisioned}`, "--nats-stream", ours],
          ...["--nats-consumer", `limits-${suffix}`, "--audit-topic", audit],
          ...[
            "--nats-stream-max-age",
            "2h",
            "--nats-stream-max-bytes",
            "64MiB",
            "--nats-stream-max-msgs",
            "20",
          ],
          ...["--broker-max-deliveries", "4", "--broker-redelivery-backoff", "2s,1m"],
        ],
      });
      try {
        const info = await jsm.streams.info(ours);
        expect(info.config).to.include({
          max_age: nanos(2 * 3600_000),
          max_bytes: 64 * 2 ** 20,
          max_msgs: 20,
          discard: "old",
        });
        expect(info.config.description).to.match(/kept by the webhooks service/);
        expect((await jsm.consumers.info(ours, durable)).config).to.include({
          max_deliver: 4,
          ack_wait: nanos(2000),
          max_ack_pending: 256,
        });
        expect((await jsm.consumers.info(ours, durable)).config.backoff ?? []).to.deep.equal([]);
        const operator = await jsm.streams.info(operators);
        expect(operator.config).to.include({ max_age: 0, max_bytes: -1, max_msgs: -1 });
        expect(operator.config.description ?? "").to.equal("");

        // Every API call adds to the audit trail; the stream keeps the newest 20.
        for (let i = 0; i < 30; i++) await api.call("GET", "/configs");
        const deadline = Date.now() + 10_000;
        let state = (await jsm.streams.info(ours)).state;
        while (state.last_seq < 30 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 100));
          state = (await jsm.streams.info(ours)).state;
        }
        expect((await jsm.streams.info(ours)).config.subjects).to.include.members([events, audit]);
        expect(state.last_seq).to.be.at.least(30);
        expect(state.messages).to.equal(20);
      } finally {
        await api.stop();
        await jsm.streams.delete(ours).catch(() => {});
        await jsm.streams.delete(operators).catch(() => {});
        await nc.close();
      }
    });
  });

  describe("JetStream storage", () => {
    it("stops at startup naming the stream and the flag when JetStream cannot set aside the stream's max bytes", async () => {
      const suffix = randomBytes(4).toString("hex").toUpperCase();
      const nc = await connect({ servers: "nats://127.0.0.1:4222" });
      const jsm = await nc.jetstreamManager();
      let failure = "";
      try {
        // More than any test machine's disk: JetStream refuses to reserve it.
        const api = await startWebhooks({
          worker: true,
          args: [
            ...["--broker-topics", `too-big-${suffix}`, "--nats-stream", `TEST_TOO_BIG_${suffix}`],
            ...["--nats-stream-max-bytes", "1000TiB", "--audit-topic", ""],
          ],
        }).catch((err: Error) => {
          failure = err.message;
          return undefined;
        });
        await api?.stop();
        expect(failure).to.match(/process exited with 1/);
        expect(failure).to.include(`cannot create NATS stream TEST_TOO_BIG_${suffix}: insufficient storage`);
        expect(failure).to.include("lower --nats-stream-max-bytes");
        expect(await jsm.streams.info(`TEST_TOO_BIG_${suffix}`).catch(() => undefined)).to.equal(undefined);
      } finally {
        await nc.close();
      }
    });
  });

  describe("--storage-sqldb-statement-timeout", () => {
    const env = new DeliveryEnv();
    before(async () => {
      await env.start(["--storage-sqldb-statement-timeout", "500ms", "--storage-sqldb-pool-size", "3"]);
    });
    after(() => env.stop());

    it("answers 503 naming the flag when a statement outlives it, and serves again afterwards", async () => {
      const config = await env.createConfig({ endpoint: "http://127.0.0.1:9/hook" });
      const lock = await lockConfigs(env.api);
      try {
        const started = Date.now();
        const r = await env.api.call("GET", `/configs/${config.id}`);
        const tookMs = Date.now() - started;
        expect(r.status, r.text).to.equal(503);
        expect(r.body.errorCode).to.equal("UNAVAILABLE");
        expect(r.body.errorMessage).to.equal(
          "the database did not finish a statement within 500ms (--storage-sqldb-statement-timeout); try again",
        );
        // Cut off by the timeout, not by the lock's end.
        expect(tookMs).to.be.lessThan(10_000);
      } finally {
        await lock.release();
      }
      const after = await env.api.call("GET", `/configs/${config.id}`);
      expect(after.status).to.equal(200);
    });
  });

  describe("--storage-sqldb-connect-timeout", () => {
    let api: WebhooksUnderTest;
    before(async () => {
      api = await startWebhooks({
        args: [
          ...["--audit-topic", "", "--storage-sqldb-pool-size", "1"],
          ...["--storage-sqldb-connect-timeout", "300ms", "--storage-sqldb-statement-timeout", "0"],
        ],
      });
    });
    after(() => api?.stop());

    it("answers 503 naming the flags when no connection frees up in time", async () => {
      const created = await api.call("POST", "/configs", {
        endpoint: "https://x.test/h",
        eventTypes: ["a.b"],
      });
      const id = created.body.data.id;
      const lock = await lockConfigs(api);
      let first: Promise<{ status: number }> | undefined;
      try {
        // The pool's one connection waits on the lock...
        first = api.call("GET", `/configs/${id}`);
        await new Promise((r) => setTimeout(r, 300));
        // ...so this request gets none.
        const r = await api.call("GET", `/configs/${id}`);
        expect(r.status, r.text).to.equal(503);
        expect(r.body.errorMessage).to.equal(
          "no database connection was free or could be opened within 300ms (--storage-sqldb-connect-timeout, --storage-sqldb-pool-size); try again",
        );
      } finally {
        await lock.release();
      }
      expect((await first!).status).to.equal(200);
    });
  });

  describe("SIGTERM while sends are in flight", () => {
    const env = new DeliveryEnv();
    let receiver: Receiver;
    const answered: string[] = [];
    const SLOW_MS = 4000;

    before(async () => {
      receiver = await new Receiver().start();
      receiver.respond = (req, res) =>
        setTimeout(() => {
          res.writeHead(200).end("ok");
          answered.push(String(req.headers["svc-webhook-id"]));
        }, SLOW_MS);
      await env.start(["--shutdown-grace", "20s"]);
    });
    after(async () => {
      await receiver?.stop();
      await env.stop();
    });

    it("lets the in-flight sends finish, records their attempts and exits 0", async () => {
      const config = await env.createConfig({ endpoint: receiver.url });
      const events = Array.from({ length: 5 }, () => env.event());
      for (const e of events) await env.publish(e);
      await receiver.waitFor(events.length, 60_000);

      const stoppedAt = Date.now();
      const code = await env.api.process.stop("SIGTERM");
      const drainMs = Date.now() - stoppedAt;
      console.log(`      drained ${events.length} in-flight sends in ${drainMs} ms, exit code ${code}`);
      expect(code, env.api.process.output.slice(-3000)).to.equal(0);
      expect(answered).to.have.length(events.length);

      const rows = await sql<{ status: string; status_code: number }>(
        env.api,
        "SELECT status::text AS status, status_code FROM attempts WHERE config_id = $1",
        [config.id],
      );
      expect(rows).to.have.length(events.length);
      expect(rows.every((r) => r.status === "success" && r.status_code === 200)).to.equal(true);
      expect(env.api.process.output).to.include('"msg":"stopped"');
    });
  });
});
