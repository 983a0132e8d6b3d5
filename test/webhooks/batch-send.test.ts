import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { BATCH_IDS_HEADER, batchBody } from "../../activities/batch-body.js";
import { sendWebhook } from "../../activities/http-send.js";
import { MAX_BATCH_EVENTS } from "../../core/batching.js";
import { webhookIdFor } from "../../core/event-message.js";
import { Receiver, signedWith } from "../support/receiver.js";

const SECRET = Buffer.alloc(24, 7).toString("base64");

/**
 * One POST of a batch to a real HTTP server (Node's, with its default 16 KiB header
 * limit): the JSON array of the events' bodies in order, signed as one body under the
 * batch id, every webhook id in one header, at the largest batch a config may ask for.
 */
describe("one batch's POST", () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await new Receiver().start();
  });
  after(() => receiver?.stop());

  const events = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      webhookId: webhookIdFor(`delivery:batch-test:${i}`),
      // Unusual but valid JSON bytes, which must reach the receiver unchanged.
      body: `{"type":"ledger.batched","payload":{"seq":${i},"note":"caf\\u00e9 ${"x".repeat(i % 7)}"}}`,
    }));

  it("sends the largest batch as one signed JSON array with every id in its header", async () => {
    const batch = events(MAX_BATCH_EVENTS);
    const ids = batch.map((e) => e.webhookId);
    const batchId = randomUUID();
    const result = await sendWebhook({
      endpoint: receiver.url,
      webhookId: batchId,
      batchIds: ids,
      body: batchBody(batch.map((e) => e.body)),
      secrets: [SECRET],
      idempotencyKey: "",
      test: false,
    });
    expect(result.statusCode, result.error).to.equal(200);
    const got = receiver.requests.at(-1)!;
    expect(signedWith(SECRET, got)).to.equal(true);
    expect(got.headers["svc-webhook-id"]).to.equal(batchId);
    expect(String(got.headers[BATCH_IDS_HEADER]).split(",")).to.deep.equal(ids);
    const array = JSON.parse(got.body) as { payload: { seq: number } }[];
    expect(array.map((e) => e.payload.seq)).to.deep.equal(batch.map((_, i) => i));
    // Each element is the event's own bytes.
    expect(got.body).to.equal(`[${batch.map((e) => e.body).join(",")}]`);
  });
});
