// The verifier against the shared test vectors (clients/test-vectors.json, path in
// TEST_VECTORS): run by test/clients/typescript-client.test.ts on the installed package.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { verifyWebhook, WebhookVerificationError } from "@event-traffic/webhooks-client";

const file = process.env.TEST_VECTORS;
if (!file) throw new Error("set TEST_VECTORS to the path of clients/test-vectors.json");
const vectors = JSON.parse(readFileSync(file, "utf8"));

for (const v of vectors.cases) {
  test(`vector: ${v.name}`, () => {
    const verify = (body) =>
      verifyWebhook(v.secret, v.headers, body, { now: v.now, toleranceSeconds: vectors.toleranceSeconds });
    if (v.expect === "ok") {
      const id = v.headers["webhook-id"] ?? v.headers["svc-webhook-id"];
      assert.deepEqual(verify(v.body), { id, timestamp: Number(v.signed.timestamp) });
      // The same bytes as a Uint8Array, as a framework's raw body gives them.
      assert.equal(verify(new TextEncoder().encode(v.body)).id, id);
    } else {
      assert.throws(
        () => verify(v.body),
        (err) => err instanceof WebhookVerificationError && err.code === v.expect,
      );
    }
  });
}

test("headers given as a fetch Headers object", () => {
  const v = vectors.cases.find((c) => c.expect === "ok");
  assert.equal(
    verifyWebhook(v.secret, new Headers(v.headers), v.body, { now: v.now }).timestamp,
    v.signed.timestamp,
  );
});

test("a secret that is not base64 is refused by name", () => {
  const v = vectors.cases[0];
  assert.throws(
    () => verifyWebhook("whsec_not base64!", v.headers, v.body, { now: v.now }),
    (err) => err.code === "invalid-secret",
  );
});
