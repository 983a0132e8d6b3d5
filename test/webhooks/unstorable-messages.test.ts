import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { eventually, metric } from "../support/poison.js";
import { Receiver } from "../support/receiver.js";
import {
  type BrokerUnderTest,
  deadLetterAt,
  kafkaUnderTest,
  natsUnderTest,
  parked,
  refuseDeadLetters,
  type StoredDeadLetter,
  unstorableMessages,
  validEvent,
} from "../support/unstorable.js";

// Issue 34 point 4: messages holding bytes PostgreSQL cannot store as text (a
// NUL, a lone surrogate, invalid UTF-8) end in the dead-letter store exactly as
// published and never hold up the consumer; and a dead letter the store itself
// refuses is parked on local disk, reported, and imported once it is accepted.

const BROKERS = [
  ["NATS", natsUnderTest],
  ["Kafka", kafkaUnderTest],
] as const;

const delivered = (receiver: Receiver, key: string) => () =>
  Promise.resolve(receiver.requests.some((r) => JSON.parse(r.body).idempotency_key === key));

/** The message as GET /dead-letters/{id} shows it, back to bytes. */
async function bytesFromApi(b: BrokerUnderTest, id: string): Promise<Buffer> {
  const r = await b.api.call("GET", `/dead-letters/${id}`);
  expect(r.status, r.text).to.equal(200);
  const d = r.body.data as { message?: string; messageBase64?: string; messageBytes: number };
  const bytes =
    d.messageBase64 !== undefined ? Buffer.from(d.messageBase64, "base64") : Buffer.from(d.message!, "utf8");
  expect(bytes.length).to.equal(d.messageBytes);
  return bytes;
}

/** Kafka: the group's committed offset moves past `position` (the offset of a settled message). */
async function committedPast(b: BrokerUnderTest, position: string): Promise<void> {
  if (!b.committedOffset) return;
  const offset = Number(position.split(":").at(-1));
  await eventually(
    "the committed offset past the message",
    async () => (await b.committedOffset!()) > offset,
    30_000,
  );
}

for (const [brokerName, open] of BROKERS) {
  describe(`messages PostgreSQL cannot store as text (${brokerName})`, function () {
    this.timeout(300_000);
    const receiver = new Receiver();
    let b: BrokerUnderTest;

    before(async () => {
      await receiver.start();
      b = await open();
      const r = await b.api.call("POST", "/configs", {
        endpoint: receiver.url,
        eventTypes: ["ledger.committed_transactions"],
      });
      expect(r.status, r.text).to.equal(200);
    });
    after(async () => {
      await receiver.stop();
      await b?.stop();
    });

    for (const [i, m] of unstorableMessages("unstorable").entries()) {
      it(`dead-letters ${m.name} byte-exact within 30 s and delivers the valid event after it`, async () => {
        const position = await b.publish(m.bytes);
        const after = `after-${i}`;
        await b.publish(validEvent(after));

        let row: StoredDeadLetter | undefined;
        await eventually(
          "its dead letter",
          async () => {
            row = await deadLetterAt(b.api, position);
            return row !== undefined;
          },
          30_000,
        );
        expect(row!.message.toString("hex")).to.equal(m.bytes.toString("hex"));
        expect(row).to.include({ kind: "permanent", reason: m.reason, delivery_count: 1, event_type: null });
        await eventually("the valid event after it delivered", delivered(receiver, after), 30_000);
        await committedPast(b, position);

        expect((await bytesFromApi(b, row!.id)).toString("hex")).to.equal(m.bytes.toString("hex"));
        const replay = await b.api.call("POST", `/dead-letters/${row!.id}/replay`);
        expect(replay.status, replay.text).to.equal(409);
        expect(replay.body.errorMessage).to.equal(`the message ${m.reason.replace(/^not/, "is not")}`);
      });
    }
  });

  describe(`dead letters the store refuses are parked on disk (${brokerName})`, function () {
    this.timeout(300_000);
    const receiver = new Receiver();
    let b: BrokerUnderTest;
    let spool: string;

    before(async () => {
      await receiver.start();
      spool = path.join(await mkdtemp(path.join(tmpdir(), "dlq-spool-")), "spool");
      b = await open(["--dead-letter-spool", spool]);
      await b.api.call("POST", "/configs", {
        endpoint: receiver.url,
        eventTypes: ["ledger.committed_transactions"],
      });
    });
    after(async () => {
      await receiver.stop();
      await b?.stop();
      if (spool) await rm(path.dirname(spool), { recursive: true, force: true });
    });

    it("parks the message, keeps consuming, reports it, and imports it byte-exact once the store accepts it", async () => {
      const [bad] = unstorableMessages("parked");
      let position = "";
      const restore = await refuseDeadLetters(b.api);
      try {
        position = await b.publish(bad!.bytes);
        await b.publish(validEvent("after-parked"));
        await eventually("the valid event after it delivered", delivered(receiver, "after-parked"), 30_000);
        await eventually("the message parked", async () => (await parked(spool)).length === 1, 30_000);
        const [p] = await parked(spool);
        expect(p!.bytes.toString("hex")).to.equal(bad!.bytes.toString("hex"));
        expect(p!.meta).to.include({ position, kind: "permanent", reason: bad!.reason, deliveryCount: 1 });
        expect(p!.meta.writeError).to.match(/dead letters refused by the test/);
        await committedPast(b, position);

        expect(await metric(b.api, "webhooks_dead_letters_parked")).to.equal(1);
        expect(await metric(b.api, "webhooks_dead_letters_parked_total")).to.equal(1);
        const health = await b.api.call("GET", "/_healthcheck");
        expect(health.status).to.equal(503);
        expect(health.body.checks.broker).to.equal("ok");
        console.log(`      health while parked: ${health.body.checks.deadLetters}`);
        expect(health.body.checks.deadLetters).to.match(
          new RegExp(
            `^error: 1 message parked in ${spool} \\(the dead-letter store refused it: .*dead letters refused by the test`,
          ),
        );
      } finally {
        await restore();
      }

      let row: StoredDeadLetter | undefined;
      await eventually(
        "the parked message imported",
        async () => {
          row = await deadLetterAt(b.api, position);
          return row !== undefined;
        },
        30_000,
      );
      expect(row!.message.toString("hex")).to.equal(bad!.bytes.toString("hex"));
      expect(row).to.include({ kind: "permanent", reason: bad!.reason, delivery_count: 1 });
      await eventually("the spool emptied", async () => (await parked(spool)).length === 0, 30_000);
      await eventually(
        "health back to ok",
        async () => (await b.api.call("GET", "/_healthcheck")).status === 200,
        30_000,
      );
      expect(await metric(b.api, "webhooks_dead_letters_parked")).to.equal(0);
    });
  });
}

describe("parked dead letters left by an earlier process (NATS)", function () {
  this.timeout(120_000);
  let b: BrokerUnderTest;
  let spool: string;

  before(async () => {
    spool = path.join(await mkdtemp(path.join(tmpdir(), "dlq-spool-")), "spool");
    b = await natsUnderTest(["--dead-letter-spool", spool]);
  });
  after(async () => {
    await b?.stop();
    if (spool) await rm(path.dirname(spool), { recursive: true, force: true });
  });

  it("imports those of its own database byte-exact and leaves another database's alone", async () => {
    const u = new URL(b.api.db.url);
    const ours = `postgresql://${u.hostname}:${u.port || "5432"}${u.pathname}`;
    const bytes = Buffer.from([0x7b, 0xff, 0x00, 0xfe, 0x7d]);
    const park = async (name: string, database: string, position: string) => {
      await writeFile(path.join(spool, `${name}.msg`), bytes);
      const sidecar = {
        ...{ topic: "earlier", position, deliveryCount: 1, kind: "permanent", cause: "message" },
        ...{ reason: "not an event message: the message is not valid UTF-8", messageBytes: bytes.length },
        ...{ parkedAt: new Date().toISOString(), writeError: "the database was down", database },
      };
      await writeFile(path.join(spool, `${name}.json`), JSON.stringify(sidecar));
    };
    await park("1-ours", ours, "nats:EARLIER:7");
    await park("2-theirs", "postgresql://elsewhere:5432/other", "nats:EARLIER:8");

    let row: StoredDeadLetter | undefined;
    await eventually(
      "the parked message imported",
      async () => {
        row = await deadLetterAt(b.api, "nats:EARLIER:7");
        return row !== undefined;
      },
      30_000,
    );
    expect(row!.message.toString("hex")).to.equal(bytes.toString("hex"));
    expect(row).to.include({ kind: "permanent", delivery_count: 1 });
    await eventually("its files deleted", async () => (await readdir(spool)).length === 2, 10_000);
    expect((await readdir(spool)).sort()).to.deep.equal(["2-theirs.json", "2-theirs.msg"]);
    expect(await deadLetterAt(b.api, "nats:EARLIER:8")).to.equal(undefined);
    expect((await b.api.call("GET", "/_healthcheck")).status).to.equal(200);
    expect(await metric(b.api, "webhooks_dead_letters_parked")).to.equal(0);
    expect(b.api.process.output).to.match(
      /"database":"postgresql:\/\/elsewhere:5432\/other".*another database/,
    );
  });
});
