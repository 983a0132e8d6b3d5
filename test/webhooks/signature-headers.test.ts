import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { Webhook } from "standardwebhooks";
import { BATCH_IDS_HEADER } from "../../activities/batch-body.js";
import { sendWebhook } from "../../activities/http-send.js";
import { signatureHeader } from "../../activities/signature.js";
import { signatureHeadersOf, signingHeaders } from "../../activities/signature-headers.js";
import { type Received, Receiver, signedWith } from "../support/receiver.js";

const SECRET = Buffer.alloc(24, 9).toString("base64");
const headersOf = (r: Received): Record<string, string> =>
  Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));

describe("names of the signing headers", () => {
  const signed = { webhookId: "msg_1", timestamp: 1_700_000_000, signature: "v1,abc" };

  it("names the three headers as the product does, or exactly as Standard Webhooks does", () => {
    expect(signingHeaders("svc", signed)).to.deep.equal({
      "svc-webhook-id": "msg_1",
      "svc-webhook-timestamp": "1700000000",
      "svc-webhook-signature": "v1,abc",
    });
    expect(signingHeaders("standard", signed)).to.deep.equal({
      "webhook-id": "msg_1",
      "webhook-timestamp": "1700000000",
      "webhook-signature": "v1,abc",
    });
  });

  it("takes the config's style, else the deployment's", () => {
    expect(signatureHeadersOf(null, "svc")).to.equal("svc");
    expect(signatureHeadersOf(undefined, "standard")).to.equal("standard");
    expect(signatureHeadersOf("svc", "standard")).to.equal("svc");
    expect(signatureHeadersOf("standard", "svc")).to.equal("standard");
  });

  describe("on the wire", () => {
    let receiver: Receiver;
    before(async () => {
      receiver = await new Receiver().start();
    });
    after(() => receiver?.stop());

    const send = async (style: "svc" | "standard" | null, over: { batchIds?: string[] } = {}) => {
      const webhookId = randomUUID();
      const result = await sendWebhook({
        endpoint: receiver.url,
        webhookId,
        body: '{"type":"ledger.named","payload":{"note":"caf\\u00e9"}}',
        secrets: [SECRET],
        idempotencyKey: "ik-1",
        test: false,
        signatureHeaders: style ?? undefined,
        ...over,
      });
      expect(result.statusCode, result.error).to.equal(200);
      const got = receiver.requests.at(-1)!;
      return { webhookId, got };
    };

    it("standard: the npm library verifies the request as sent; the product's own headers keep their names", async () => {
      const { webhookId, got } = await send("standard", { batchIds: ["a", "b"] });
      expect(got.headers["webhook-id"]).to.equal(webhookId);
      expect(got.headers).to.not.have.property("svc-webhook-signature");
      expect(got.headers["svc-webhook-idempotency-key"]).to.equal("ik-1");
      expect(got.headers["svc-webhook-test"]).to.equal("false");
      expect(got.headers[BATCH_IDS_HEADER]).to.equal("a,b");
      expect(new Webhook(SECRET).verify(got.body, headersOf(got))).to.deep.include({ type: "ledger.named" });
      // The signature is the one the svc style sends under its own name.
      const timestamp = Number(got.headers["webhook-timestamp"]);
      expect(got.headers["webhook-signature"]).to.equal(
        signatureHeader([SECRET], webhookId, timestamp, got.body),
      );
    });

    it("svc (and no style: a request that names none): today's names, which the npm library does not read", async () => {
      for (const style of ["svc", null] as const) {
        const { webhookId, got } = await send(style);
        expect(got.headers["svc-webhook-id"]).to.equal(webhookId);
        expect(got.headers).to.not.have.property("webhook-id");
        expect(signedWith(SECRET, got)).to.equal(true);
        expect(() => new Webhook(SECRET).verify(got.body, headersOf(got))).to.throw(
          "Missing required headers",
        );
      }
    });
  });
});
