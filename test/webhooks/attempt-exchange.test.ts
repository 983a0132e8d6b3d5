import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { EXCERPT_BODY_BYTES, MASK } from "../../activities/attempt-exchange.js";
import { verifySignature } from "../../activities/signature.js";
import { deleteStream } from "../support/nats-streams.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/**
 * What an attempt keeps of its POST and of the endpoint's answer, through the real API, a
 * worker's deliveries and test deliveries (real PostgreSQL, NATS, Temporal, receivers); and
 * test deliveries of a catalog type's example.
 */
describe("attempts keep the headers sent and an excerpt of the answer", function () {
  this.timeout(120_000);
  let api: WebhooksUnderTest;
  let receiver: Receiver;
  const suffix = randomBytes(3).toString("hex");
  const stream = `EXCHANGE_${suffix.toUpperCase()}`;
  const apiKey = `key-${randomBytes(8).toString("hex")}`;
  let configId = "";
  let secret = "";

  before(async () => {
    receiver = await new Receiver().start();
    api = await startWebhooks({
      worker: true,
      args: [
        ...["--broker-topics", `exchange-${suffix}`, "--nats-stream", stream, "--audit-topic", ""],
        ...["--min-backoff-delay", "200ms", "--max-backoff-delay", "300ms", "--max-attempts", "2"],
        ...["--config-max-test-sends", "0", "--tenant-max-test-sends", "0"],
      ],
    });
    const created = await api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["shop.*"],
      auth: { headers: [{ name: "X-Api-Key", value: apiKey }] },
    });
    expect(created.status, created.text).to.equal(200);
    configId = created.body.data.id;
    secret = created.body.data.secret;
  });
  after(async () => {
    await api?.stop();
    await receiver?.stop();
    await deleteStream(stream);
  });

  const test = (body?: unknown) => api.call("POST", `/configs/${configId}/test`, body);

  it("keeps a failed answer's body excerpt and chosen headers, with the endpoint's credential masked", async () => {
    receiver.respond = (req, res) =>
      res
        .writeHead(503, {
          "content-type": "text/plain",
          "retry-after": "120",
          "x-request-id": "req-42",
          "set-cookie": "session=abc",
        })
        .end(`maintenance: db 10.1.2.3 down; you sent ${req.headers["x-api-key"]}`);
    const tested = await test();
    expect(tested.status, tested.text).to.equal(200);
    const attempt = tested.body.data;
    expect(attempt.statusCode).to.equal(503);
    expect(attempt.response).to.deep.equal({
      headers: {
        "content-type": "text/plain",
        "retry-after": "120",
        "x-request-id": "req-42",
      },
      body: `maintenance: db 10.1.2.3 down; you sent ${MASK}`,
      truncated: false,
    });
    // The signing headers as sent: the check redone from the recorded values passes.
    const sent = attempt.requestHeaders as Record<string, string>;
    expect(sent["x-api-key"]).to.equal(MASK);
    expect(sent["svc-webhook-id"]).to.equal(attempt.webhookID);
    const received = receiver.requests.at(-1)!;
    expect(sent["svc-webhook-timestamp"]).to.equal(received.headers["svc-webhook-timestamp"]);
    const signed = {
      id: sent["svc-webhook-id"]!,
      timestamp: sent["svc-webhook-timestamp"]!,
      signature: sent["svc-webhook-signature"]!,
    };
    expect(verifySignature(secret, signed, attempt.payload)).to.equal(true);
    // GET /webhooks/{id}/attempts answers the same.
    const listed = await api.call("GET", `/webhooks/${attempt.webhookID}/attempts`);
    expect(listed.body.cursor.data[0].response).to.deep.equal(attempt.response);
    expect(listed.body.cursor.data[0].requestHeaders).to.deep.equal(sent);
  });

  it("cuts a long body at 1 KiB on a character boundary and stores a NUL byte", async () => {
    const long = `\u0000${"é".repeat(EXCERPT_BODY_BYTES)}`;
    receiver.respond = (_req, res) => res.writeHead(500).end(long);
    const attempt = (await test()).body.data;
    expect(attempt.statusCode).to.equal(500);
    expect(attempt.response.truncated).to.equal(true);
    const body = attempt.response.body as string;
    expect(Buffer.byteLength(body)).to.be.at.most(EXCERPT_BODY_BYTES);
    expect(body).to.match(/^\uFFFDé+$/);
  });

  it("keeps no answer when none came, and the headers sent", async () => {
    const closed = await api.call("POST", "/configs", {
      endpoint: "http://127.0.0.1:9/hook",
      eventTypes: ["shop.*"],
    });
    const attempt = (await api.call("POST", `/configs/${closed.body.data.id}/test`)).body.data;
    expect(attempt.statusCode).to.equal(0);
    expect(attempt).not.to.have.property("response");
    expect(attempt.requestHeaders["svc-webhook-test"]).to.equal("true");
  });

  it("keeps them for each attempt of a delivery the worker retries", async () => {
    let n = 0;
    receiver.respond = (_req, res) => res.writeHead(502).end(`upstream ${++n}`);
    const sent = await api.call("POST", "/events", {
      app: "shop",
      type: "order_paid",
      idempotency_key: `exchange-${suffix}`,
      payload: { id: 1 },
    });
    expect(sent.status, sent.text).to.equal(202);
    const webhookId = sent.body.data.deliveries[0].webhookID as string;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const d = (await api.call("GET", `/webhooks/${webhookId}`)).body.data;
      if (d?.status === "failed") {
        const bodies = d.attempts.map((a: { response: { body: string } }) => a.response.body).sort();
        expect(bodies).to.have.length(2);
        expect(bodies[0]).to.match(/^upstream \d$/);
        expect(bodies[0]).not.to.equal(bodies[1]);
        expect(d.attempts[0].requestHeaders["x-api-key"]).to.equal(MASK);
        break;
      }
      if (Date.now() > deadline) throw new Error(`the delivery never ended failed: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  describe("a test delivery of a catalog type's example", () => {
    before(async () => {
      receiver.respond = (_req, res) => res.writeHead(200).end("ok");
      const example = { orderId: "ord_7", amount: 12 };
      expect((await api.call("PUT", "/event-types/shop.order_shipped", { example })).status).to.equal(201);
      expect((await api.call("PUT", "/event-types/shop.order_lost", { description: "x" })).status).to.equal(
        201,
      );
    });

    it("sends the example under its type", async () => {
      const tested = await test({ eventType: "Shop.Order_Shipped" });
      expect(tested.status, tested.text).to.equal(200);
      const received = JSON.parse(receiver.requests.at(-1)!.body);
      expect(received).to.deep.include({
        app: "shop",
        type: "shop.order_shipped",
        payload: { orderId: "ord_7", amount: 12 },
      });
      expect(received.idempotency_key).to.equal(`test-${tested.body.data.webhookID}`);
      const listed = await api.call("GET", `/configs/${configId}/deliveries?eventType=shop.order_shipped`);
      expect(listed.body.cursor.data.map((d: { webhookID: string }) => d.webhookID)).to.deep.equal([
        tested.body.data.webhookID,
      ]);
    });

    it("refuses an unknown type, one without an example, and a bad body, naming eventType, sending nothing", async () => {
      const before = receiver.requests.length;
      const cases: [unknown, RegExp][] = [
        [{ eventType: "shop.order_unknown" }, /^eventType "shop.order_unknown" is not in the event catalog/],
        [
          { eventType: "shop.order_lost" },
          /^eventType "shop.order_lost" has no example in the event catalog/,
        ],
        [{ eventType: 7 }, /eventType/],
        [{ eventType: "" }, /eventType/],
        [{ type: "shop.order_shipped" }, /type/],
      ];
      for (const [body, message] of cases) {
        const r = await test(body);
        expect(r.status, r.text).to.equal(400);
        expect(r.body.errorMessage, JSON.stringify(body)).to.match(message);
      }
      expect(receiver.requests.length).to.equal(before);
      // No body at all is still the default test event.
      expect((await test()).status).to.equal(200);
      expect(JSON.parse(receiver.requests.at(-1)!.body).type).to.equal("webhooks.test");
    });
  });
});
