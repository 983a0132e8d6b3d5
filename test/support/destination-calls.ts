import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { verifySignature } from "../../activities/signature.js";
import type { DeliveryEnv } from "./delivery-env.js";
import { until } from "./until.js";

// What the broker destination tests (test/webhooks/destinations.test.ts,
// test/webhooks/destination-sqs.test.ts) do the same way: unique names, posting an event,
// waiting for its success row, a refused destination's message, and checking a message's
// signature from its headers (or attributes) as a consumer would.

/** `prefix` with a random suffix: a topic, queue or event type no other test uses. */
export const uniq = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

/** Whether the message's svc-webhook-* headers sign `body` with the config's `secret`. */
export const signedBy = (secret: string, headers: Record<string, string>, body: string) =>
  verifySignature(
    secret,
    {
      id: headers["svc-webhook-id"]!,
      timestamp: headers["svc-webhook-timestamp"]!,
      signature: headers["svc-webhook-signature"]!,
    },
    body,
  );

/** A delivery's message (not a test delivery's) of an event of `type`: signed by `secret`, with the delivery's headers. */
export function expectDeliveryMessage(
  secret: string,
  headers: Record<string, string>,
  body: string,
  type: string,
): void {
  expect(signedBy(secret, headers, body), JSON.stringify(headers)).to.equal(true);
  expect(headers["svc-webhook-test"]).to.equal("false");
  expect(headers["svc-webhook-idempotency-key"]).to.match(/^ik-/);
  expect(headers["content-type"]).to.equal("application/json");
  expect(JSON.parse(body).type).to.equal(type);
}

export function destinationCalls(env: DeliveryEnv) {
  return {
    /** Posts one event of `type` and answers its webhook id. */
    async post(type: string, over: Record<string, unknown> = {}): Promise<string> {
      const r = await env.api.call("POST", "/events", env.event({ type, ...over }));
      expect(r.status, r.text).to.equal(202);
      expect(r.body.data.deliveries, r.text).to.have.length(1);
      return r.body.data.deliveries[0].webhookID as string;
    },

    /** Whether the delivery of `webhookId` has a success row. */
    async succeeded(configId: string, webhookId: string): Promise<boolean> {
      return (await env.attempts(configId)).some((a) => a.webhook_id === webhookId && a.status === "success");
    },

    /** Waits for `count` attempts that reached nothing (status code 0, an error): the first one's error. */
    async failedAttempts(configId: string, count: number): Promise<string> {
      const failed = async () =>
        (await env.attempts(configId)).filter((a) => a.status_code === 0 && a.error !== null);
      await until(`${count} failed attempts`, async () => (await failed()).length >= count, 60_000);
      return (await failed())[0]!.error!;
    },

    /** Creating a config with `destination` is a 400 VALIDATION: its message. */
    async refused(
      destination: Record<string, unknown>,
      extra: Record<string, unknown> = {},
    ): Promise<string> {
      const r = await env.api.call("POST", "/configs", {
        eventTypes: ["ledger.anything"],
        destination,
        ...extra,
      });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.errorCode).to.equal("VALIDATION");
      return r.body.errorMessage as string;
    },
  };
}
