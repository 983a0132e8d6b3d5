// Retries of 429 and 503 against a real HTTP server that answers them on purpose (the live
// API answers 503 only when a dependency is down): what is waited for, what is not, and
// that a retried POST sends its body again.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";
import { ApiError, createWebhooksClient, unwrap } from "@event-traffic/webhooks-client";

let server;
let base;
/** Each request's method, body and arrival; `answers` is the script of statuses and headers. */
const seen = [];
let answers = [];

before(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method, body, at: Date.now(), auth: req.headers.authorization });
      const [status, headers = {}] = answers.shift() ?? [200];
      const payload =
        status === 200
          ? { data: { id: "00000000-0000-4000-8000-000000000001" } }
          : { errorCode: status === 429 ? "RATE_LIMITED" : "UNAVAILABLE", errorMessage: "not now" };
      res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(payload));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => server.close());

const reset = (script) => {
  seen.length = 0;
  answers = script;
};

test("a 503 with Retry-After: 1 is tried again a second later, with the token and the same body", async () => {
  reset([
    [503, { "retry-after": "1" }],
    [429, { "retry-after": "0" }],
  ]);
  const api = createWebhooksClient({ baseUrl: base, token: "t0k3n" });
  const body = { endpoint: "https://example.com/hook", eventTypes: ["a.b"] };
  unwrap(await api.POST("/configs", { body }));
  assert.equal(seen.length, 3);
  assert.ok(seen[1].at - seen[0].at >= 990, `waited ${seen[1].at - seen[0].at} ms`);
  for (const s of seen) {
    assert.equal(s.auth, "Bearer t0k3n");
    assert.deepEqual(JSON.parse(s.body), body);
  }
});

test("without Retry-After the wait doubles from initialDelayMs; after maxRetries the answer is returned", async () => {
  reset([[503], [503], [503]]);
  const api = createWebhooksClient({ baseUrl: base, retry: { maxRetries: 2, initialDelayMs: 100 } });
  const result = await api.GET("/configs");
  assert.equal(result.response.status, 503);
  assert.equal(seen.length, 3);
  assert.ok(seen[1].at - seen[0].at >= 95 && seen[2].at - seen[1].at >= 195);
  assert.throws(
    () => unwrap(result),
    (err) => err instanceof ApiError && err.code === "UNAVAILABLE",
  );
});

test("a Retry-After longer than maxDelayMs is not waited for", async () => {
  reset([[429, { "retry-after": "120" }]]);
  const api = createWebhooksClient({ baseUrl: base });
  const started = Date.now();
  const result = await api.GET("/configs");
  assert.equal(result.response.status, 429);
  assert.equal(seen.length, 1);
  assert.ok(Date.now() - started < 1000);
});

test("retry: false sends once; a bad policy is refused by name", async () => {
  reset([[503, { "retry-after": "0" }]]);
  const api = createWebhooksClient({ baseUrl: base, retry: false });
  assert.equal((await api.GET("/configs")).response.status, 503);
  assert.equal(seen.length, 1);
  assert.throws(
    () => createWebhooksClient({ baseUrl: base, retry: { maxRetries: -1 } }),
    /retry\.maxRetries/,
  );
  assert.throws(
    () => createWebhooksClient({ baseUrl: "localhost:8080" }),
    /baseUrl must be an absolute http\(s\) URL/,
  );
});
