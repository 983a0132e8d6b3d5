import { randomBytes } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { streamTexts, textsOf } from "../support/payload-texts.js";
import { eventually, sql } from "../support/poison.js";
import { makeTestPki, type TestPki } from "../support/test-pki.js";

// Issue 35, point 3: endpoint auth and custom headers. Receivers written here refuse a
// request without the right credential; the OAuth server counts its token requests; the
// TLS receiver checks the client certificate. Credentials are sealed at rest, masked in
// answers, and in clear nowhere a run leaves text behind.

const MASK = "********";
const hex = (n: number) => randomBytes(n).toString("hex");

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  status: number;
}

const listen = async (server: http.Server) => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return (server.address() as AddressInfo).port;
};

describe("endpoint auth and headers (real PostgreSQL, Temporal, NATS; receivers written here)", function () {
  this.timeout(240_000);
  let env: DeliveryEnv;
  let pki: TestPki;
  let plain: http.Server;
  let tlsServer: https.Server;
  let base: string;
  let tlsBase: string;
  let other: http.Server;
  let otherBase: string;
  /** What the server of another origin received after a redirect. */
  const otherSeen: http.IncomingHttpHeaders[] = [];
  const auditTopic = `audit-${hex(4)}`;
  const seen: Seen[] = [];
  const tlsSeen: { path: string; authorized: boolean; subject: string }[] = [];

  // The credentials the receivers want.
  const headerValue = `hv-${hex(12)}`;
  const basic = { username: "acme", password: `pw-${hex(12)}` };
  const bearer = `bt-${hex(16)}`;
  const client = { id: "client-1", secret: `cs-${hex(12)}` };
  /** Token endpoint per name: how long its tokens live, how many were asked for, which are valid. */
  const oauth = new Map<string, { expiresIn: number; requests: number; valid: Set<string>; fail?: number }>();
  const issued: string[] = [];

  const decode = (auth: string | undefined, scheme: string) =>
    auth?.startsWith(`${scheme} `) ? auth.slice(scheme.length + 1) : undefined;

  function answer(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    const [, kind, name = ""] = (req.url ?? "").split("/");
    const auth = req.headers.authorization;
    let status = 401;
    if (kind === "token") {
      const server = oauth.get(name)!;
      server.requests++;
      const [id, secret] = Buffer.from(decode(auth, "Basic") ?? "", "base64")
        .toString()
        .split(":")
        .map(decodeURIComponent);
      const form = new URLSearchParams(body);
      if (server.fail) {
        res.writeHead(server.fail, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "server_error", error_description: "the token service is down" }));
        return;
      }
      if (id !== client.id || secret !== client.secret || form.get("grant_type") !== "client_credentials") {
        res
          .writeHead(401, { "content-type": "application/json" })
          .end(JSON.stringify({ error: "invalid_client" }));
        return;
      }
      const token = `at-${hex(16)}`;
      issued.push(token);
      server.valid.add(token);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: token, token_type: "Bearer", expires_in: server.expiresIn }));
      return;
    }
    if (kind === "headers")
      status = req.headers["x-api-key"] === headerValue && req.headers["x-team"] === "blue" ? 200 : 401;
    if (kind === "basic")
      status =
        decode(auth, "Basic") === Buffer.from(`${basic.username}:${basic.password}`).toString("base64")
          ? 200
          : 401;
    if (kind === "bearer") status = decode(auth, "Bearer") === bearer ? 200 : 401;
    if (kind === "redirect") {
      seen.push({ path: req.url ?? "", headers: req.headers, status: 307 });
      const to = name === "same" ? "/bearer/after-redirect" : `${otherBase}/elsewhere`;
      res.writeHead(307, { location: to }).end();
      return;
    }
    if (kind === "oauth") status = oauth.get(name)?.valid.has(decode(auth, "Bearer") ?? "") ? 200 : 401;
    seen.push({ path: req.url ?? "", headers: req.headers, status });
    res.writeHead(status).end(status === 200 ? "ok" : "who are you?");
  }

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => answer(req, res, body));
  };

  before(async () => {
    pki = await makeTestPki();
    plain = http.createServer(handler);
    base = `http://127.0.0.1:${await listen(plain)}`;
    other = http.createServer((req, res) => {
      otherSeen.push(req.headers);
      req.resume();
      res.writeHead(200).end();
    });
    otherBase = `http://127.0.0.1:${await listen(other)}`;
    tlsServer = https.createServer(
      { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const socket = req.socket as TLSSocket;
        const peer = socket.getPeerCertificate();
        tlsSeen.push({
          path: req.url ?? "",
          authorized: socket.authorized,
          subject: String(peer?.subject?.CN ?? ""),
        });
        req.resume();
        // The client certificate is checked here: signed by the test CA, or refused.
        res.writeHead(socket.authorized ? 200 : 403).end();
      },
    );
    tlsBase = `https://127.0.0.1:${await listen(tlsServer)}`;
    env = await new DeliveryEnv().start(["--max-attempts", "2", "--audit-topic", auditTopic]);
  });

  after(async () => {
    await env?.stop();
    plain?.close();
    other?.close();
    tlsServer?.close();
  });

  const create = async (kind: string, endpoint: string, auth?: Record<string, unknown>) => {
    const r = await env.api.call("POST", "/configs", {
      endpoint,
      eventTypes: [`authtest.${kind}`],
      ...(auth ? { auth } : {}),
    });
    expect(r.status, r.text).to.equal(200);
    return r.body.data as { id: string; auth?: Record<string, unknown> };
  };

  /** Posts `n` events of `kind`; their idempotency keys. */
  const post = async (kind: string, n = 1) => {
    const iks: string[] = [];
    for (let i = 0; i < n; i++) {
      const event = env.event({ app: "authtest", type: kind });
      const r = await env.api.call("POST", "/events", event);
      expect(r.status, r.text).to.be.oneOf([200, 202]);
      iks.push(event.idempotency_key);
    }
    return iks;
  };

  /** The first attempt row of each of the config's deliveries, once `n` exist. */
  const firstAttempts = async (configId: string, n: number) => {
    await eventually(
      "the attempts",
      async () => (await env.attempts(configId)).filter((a) => a.retry_attempt === 0).length >= n,
      60_000,
    );
    return (await env.attempts(configId)).filter((a) => a.retry_attempt === 0);
  };

  it("sends custom headers, basic auth and a bearer token; the same endpoints refuse a config without them", async () => {
    const cases = [
      [
        "headers",
        {
          headers: [
            { name: "X-Api-Key", value: headerValue },
            { name: "X-Team", value: "blue" },
          ],
        },
      ],
      ["basic", { basic }],
      ["bearer", { bearer: { token: bearer } }],
    ] as const;
    for (const [kind, auth] of cases) {
      const withAuth = await create(kind, `${base}/${kind}/with`, auth);
      const without = await create(kind, `${base}/${kind}/without`);
      const wrong = await create(
        kind,
        `${base}/${kind}/wrong`,
        kind === "headers"
          ? {
              headers: [
                { name: "X-Api-Key", value: "nope" },
                { name: "X-Team", value: "blue" },
              ],
            }
          : kind === "basic"
            ? { basic: { ...basic, password: "nope" } }
            : { bearer: { token: "nope" } },
      );
      await post(kind);
      expect((await firstAttempts(withAuth.id, 1))[0]!.status, kind).to.equal("success");
      for (const refused of [without, wrong])
        expect((await firstAttempts(refused.id, 1))[0]!.status_code, kind).to.equal(401);
    }
    // Answers show which kinds are configured and their public parts, never a credential.
    const shown = await create("headers", `${base}/headers/shown`, {
      headers: [{ name: "X-Api-Key", value: headerValue }],
      basic,
    });
    expect(shown.auth).to.deep.equal({
      headers: [{ name: "X-Api-Key", value: MASK }],
      basic: { username: basic.username, password: MASK },
    });
    expect((await env.api.call("GET", `/configs/${shown.id}`)).body.data.auth).to.deep.equal(shown.auth);
  });

  it("follows a redirect with the credentials within the endpoint's origin only", async () => {
    const auth = { bearer: { token: bearer }, headers: [{ name: "X-Api-Key", value: headerValue }] };
    const same = await create("redirect", `${base}/redirect/same`, auth);
    const elsewhere = await create("redirect", `${base}/redirect/other`, auth);
    await post("redirect");
    expect((await firstAttempts(same.id, 1))[0]!.status).to.equal("success");
    const after = seen.find((x) => x.path === "/bearer/after-redirect")!;
    expect(after.status).to.equal(200);
    expect(after.headers["x-api-key"]).to.equal(headerValue);
    expect((await firstAttempts(elsewhere.id, 1))[0]!.status).to.equal("success");
    // The other origin got the signed webhook, without the config's Authorization or headers.
    expect(seen.find((x) => x.path === "/redirect/other")!.headers.authorization).to.equal(
      `Bearer ${bearer}`,
    );
    expect(otherSeen).to.have.length(1);
    expect(otherSeen[0]!["svc-webhook-signature"]).to.be.a("string");
    expect(otherSeen[0]!.authorization).to.equal(undefined);
    expect(otherSeen[0]!["x-api-key"]).to.equal(undefined);
  });

  it("changes one credential without resending the others, and removes auth", async () => {
    const c = await create("basic", `${base}/basic/changed`, {
      basic: { username: basic.username, password: "old" },
      headers: [
        { name: "X-Api-Key", value: headerValue },
        { name: "X-Team", value: "blue" },
      ],
    });
    // Only the password: the username and the headers stay.
    const changed = await env.api.call("PATCH", `/configs/${c.id}/auth`, {
      basic: { password: basic.password },
    });
    expect(changed.status, changed.text).to.equal(200);
    expect(changed.body.data.basic).to.deep.equal({ username: basic.username, password: MASK });
    // A header without value keeps its stored value.
    const reordered = await env.api.call("PATCH", `/configs/${c.id}/auth`, {
      headers: [{ name: "X-Team" }, { name: "X-Api-Key" }],
    });
    expect(reordered.body.data.headers.map((h: { name: string }) => h.name)).to.deep.equal([
      "X-Team",
      "X-Api-Key",
    ]);
    await post("basic");
    expect((await firstAttempts(c.id, 1))[0]!.status).to.equal("success");
    const got = seen.find((s) => s.path === "/basic/changed")!;
    expect(got.headers["x-api-key"]).to.equal(headerValue);
    expect(got.headers["x-team"]).to.equal("blue");

    // A PUT without auth keeps it (the Formance shape has no auth); null removes a kind; DELETE removes all.
    const put = await env.api.call("PUT", `/configs/${c.id}`, {
      endpoint: `${base}/basic/changed`,
      eventTypes: ["authtest.none"],
    });
    expect(put.body.data.auth.basic.username).to.equal(basic.username);
    expect((await env.api.call("PATCH", `/configs/${c.id}/auth`, { basic: null })).body.data).to.deep.equal({
      headers: [
        { name: "X-Team", value: MASK },
        { name: "X-Api-Key", value: MASK },
      ],
    });
    expect((await env.api.call("DELETE", `/configs/${c.id}/auth`)).status).to.equal(200);
    expect((await env.api.call("GET", `/configs/${c.id}/auth`)).body.data).to.deep.equal({});
    expect((await sql(env.api, "SELECT 1 FROM config_auth WHERE config_id = $1", [c.id])).length).to.equal(0);
  });

  it("writes a config and its auth together: when the auth row cannot be written, neither is", async () => {
    const c = await create("atomic", `${base}/basic/atomic`, {
      basic: { username: basic.username, password: basic.password },
    });
    await sql(
      env.api,
      `CREATE FUNCTION refuse_auth() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'config_auth refused by the test'; END $$;
       CREATE TRIGGER refuse_auth BEFORE INSERT OR UPDATE ON config_auth
        FOR EACH ROW EXECUTE FUNCTION refuse_auth()`,
    );
    try {
      const created = await env.api.call("POST", "/configs", {
        endpoint: `${base}/basic/atomic-new`,
        eventTypes: ["authtest.atomic"],
        auth: { bearer: { token: "never-stored" } },
      });
      expect(created.status, created.text).to.equal(500);
      expect(await sql(env.api, "SELECT id FROM configs WHERE endpoint = $1", [`${base}/basic/atomic-new`]))
        .to.be.empty;

      const replaced = await env.api.call("PUT", `/configs/${c.id}`, {
        endpoint: `${base}/basic/atomic-moved`,
        eventTypes: ["authtest.atomic"],
        auth: { basic: { password: "not-stored" } },
      });
      expect(replaced.status, replaced.text).to.equal(500);
    } finally {
      await sql(env.api, "DROP TRIGGER refuse_auth ON config_auth; DROP FUNCTION refuse_auth()");
    }
    const kept = (await env.api.call("GET", `/configs/${c.id}`)).body.data;
    expect(kept.endpoint).to.equal(`${base}/basic/atomic`);
    expect(kept.eventTypes).to.deep.equal(["authtest.atomic"]);
    await post("atomic");
    expect((await firstAttempts(c.id, 1))[0]!.status).to.equal("success");
  });

  it("fetches one OAuth token per expiry window for every send of a config, not one per send", async () => {
    oauth.set("long", { expiresIn: 3600, requests: 0, valid: new Set() });
    const c = await create("oauthlong", `${base}/oauth/long`, {
      oauth2: {
        tokenUrl: `${base}/token/long`,
        clientId: client.id,
        clientSecret: client.secret,
        scope: "webhooks:write",
      },
    });
    expect(c.auth).to.deep.equal({
      oauth2: {
        tokenUrl: `${base}/token/long`,
        clientId: client.id,
        clientSecret: MASK,
        scope: "webhooks:write",
      },
    });
    await post("oauthlong", 20);
    const rows = await firstAttempts(c.id, 20);
    expect(rows.map((r) => r.status)).to.deep.equal(Array(20).fill("success"));
    // 20 concurrent deliveries, one token request (single-flight).
    expect(oauth.get("long")!.requests).to.equal(1);

    oauth.set("short", { expiresIn: 1, requests: 0, valid: new Set() });
    const s = await create("oauthshort", `${base}/oauth/short`, {
      oauth2: { tokenUrl: `${base}/token/short`, clientId: client.id, clientSecret: client.secret },
    });
    await post("oauthshort");
    await firstAttempts(s.id, 1);
    expect(oauth.get("short")!.requests).to.equal(1);
    // Past the one-second lifetime, the next send fetches a new token.
    await new Promise((r) => setTimeout(r, 1500));
    await post("oauthshort");
    const short = await firstAttempts(s.id, 2);
    expect(short.map((r) => r.status)).to.deep.equal(["success", "success"]);
    expect(oauth.get("short")!.requests).to.equal(2);
  });

  it("refreshes the token once on a 401 and re-sends once within the attempt", async () => {
    oauth.set("revoked", { expiresIn: 3600, requests: 0, valid: new Set() });
    const c = await create("oauthrevoked", `${base}/oauth/revoked`, {
      oauth2: { tokenUrl: `${base}/token/revoked`, clientId: client.id, clientSecret: client.secret },
    });
    await post("oauthrevoked");
    await firstAttempts(c.id, 1);
    expect(oauth.get("revoked")!.requests).to.equal(1);
    // The server forgets its tokens: the cached one now gets a 401.
    oauth.get("revoked")!.valid.clear();
    const [ik] = await post("oauthrevoked");
    const rows = await firstAttempts(c.id, 2);
    expect(rows.map((r) => r.status)).to.deep.equal(["success", "success"]);
    expect(oauth.get("revoked")!.requests).to.equal(2);
    const posts = seen.filter((x) => x.path === "/oauth/revoked").map((x) => x.status);
    expect(posts).to.deep.equal([200, 401, 200]);
    expect(ik).to.be.a("string");

    // A token the endpoint refuses even fresh: one refresh, one re-send, then the attempt fails with the 401.
    oauth.set("never", { expiresIn: 3600, requests: 0, valid: new Set() });
    const never = await create("oauthnever", `${base}/oauth/other-server`, {
      oauth2: { tokenUrl: `${base}/token/never`, clientId: client.id, clientSecret: client.secret },
    });
    await post("oauthnever");
    const first = (await firstAttempts(never.id, 1))[0]!;
    expect(first.status_code).to.equal(401);
    expect(oauth.get("never")!.requests).to.equal(2);
  });

  it("fails the attempt with a reason naming the token endpoint when it gives no token, and retries it", async () => {
    oauth.set("failing", { expiresIn: 3600, requests: 0, valid: new Set(), fail: 500 });
    const c = await create("oauthfailing", `${base}/oauth/failing`, {
      oauth2: { tokenUrl: `${base}/token/failing`, clientId: client.id, clientSecret: client.secret },
    });
    oauth.set("badclient", { expiresIn: 3600, requests: 0, valid: new Set() });
    const bad = await create("oauthfailing", `${base}/oauth/badclient`, {
      oauth2: { tokenUrl: `${base}/token/badclient`, clientId: client.id, clientSecret: "wrong" },
    });
    await post("oauthfailing");
    await eventually(
      "two attempts each",
      async () => (await env.attempts(c.id)).length >= 2 && (await env.attempts(bad.id)).length >= 2,
      60_000,
    );
    const rows = await env.attempts(c.id);
    expect(rows[0]!.status_code).to.equal(0);
    expect(rows[0]!.error).to.include(
      `not sent: OAuth token endpoint ${base}/token/failing answered HTTP 500: server_error (the token service is down)`,
    );
    expect(rows[1]!.status).to.equal("failed");
    expect(oauth.get("failing")!.requests).to.equal(2);
    expect((await env.attempts(bad.id))[0]!.error).to.include("answered HTTP 401: invalid_client");
    expect(
      seen.filter((s) => s.path.startsWith("/oauth/failing") || s.path.startsWith("/oauth/badclient")),
    ).to.have.length(0);
  });

  it("presents the client certificate to a TLS receiver that checks it, trusting the configured CA", async () => {
    const good = await create("tls", `${tlsBase}/good`, {
      tls: { certificate: pki.clientCert, privateKey: pki.clientKey, caBundle: pki.ca },
    });
    const noCert = await create("tls", `${tlsBase}/nocert`, { tls: { caBundle: pki.ca } });
    const stranger = await create("tls", `${tlsBase}/stranger`, {
      tls: { certificate: pki.strangerCert, privateKey: pki.strangerKey, caBundle: pki.ca },
    });
    const noCa = await create("tls", `${tlsBase}/noca`, {
      tls: { certificate: pki.clientCert, privateKey: pki.clientKey },
    });
    expect(good.auth).to.deep.equal({
      tls: { certificate: pki.clientCert, privateKey: MASK, caBundle: pki.ca },
    });
    await post("tls");
    expect((await firstAttempts(good.id, 1))[0]!.status).to.equal("success");
    expect(tlsSeen.find((s) => s.path === "/good")).to.deep.include({ authorized: true, subject: "client" });
    expect((await firstAttempts(noCert.id, 1))[0]!.status_code).to.equal(403);
    expect((await firstAttempts(stranger.id, 1))[0]!.status_code).to.equal(403);
    // Without the CA bundle, the system roots do not trust the test CA: the send fails before any request.
    const untrusted = (await firstAttempts(noCa.id, 1))[0]!;
    expect(untrusted.status_code).to.equal(0);
    expect(untrusted.error).to.match(/certificate/i);
    expect(tlsSeen.find((s) => s.path === "/noca")).to.equal(undefined);
  });

  it("refuses bad input for every field with a 400 naming it, leaving the stored config unchanged", async () => {
    const c = await create("headers", `${base}/headers/bad-input`, {
      headers: [{ name: "X-Api-Key", value: headerValue }],
      basic,
    });
    const storedBefore = await sql(env.api, "SELECT * FROM config_auth WHERE config_id = $1", [c.id]);
    const configBefore = (await env.api.call("GET", `/configs/${c.id}`)).body.data;
    const many = Array.from({ length: 21 }, (_, i) => ({ name: `X-H${i}`, value: "v" }));
    const bad: [change: Record<string, unknown>, names: string][] = [
      [{ headers: [{ name: "Bad Name", value: "v" }] }, "headers[0].name must be an HTTP header name"],
      [{ headers: [{ name: "X-A", value: "a\r\nX-Injected: 1" }] }, "headers[0].value must be visible ASCII"],
      [
        { headers: [{ name: "X-A", value: "x".repeat(4097) }] },
        "headers[0].value must be at most 4096 characters",
      ],
      [{ headers: many }, "headers must have at most 20 items"],
      [
        {
          headers: [
            { name: "X-A", value: "1" },
            { name: "x-a", value: "2" },
          ],
        },
        `headers[1].name: header "x-a" is given twice`,
      ],
      [{ headers: [{ name: "X-New" }] }, `missing required field "headers[0].value"`],
      [
        { headers: Array.from({ length: 3 }, (_, i) => ({ name: `X-Big${i}`, value: "x".repeat(4000) })) },
        "headers: names and values total",
      ],
      [{ headers: [{ name: "X-A", value: 1 }] }, "headers[0].value must be of type string"],
      [{ basic: { username: "a:b", password: "p" } }, `basic.username must not contain ":"`],
      [{ basic: { username: "", password: "p" } }, "basic.username must not be empty"],
      [{ basic: { username: "u", password: "p\n" } }, "basic.password must be visible ASCII"],
      [{ bearer: { token: "has space" } }, "bearer.token must be an RFC 6750 token"],
      [{ bearer: {} }, `missing required field "bearer.token"`],
      [{ bearer: { token: "abc" } }, "bearer: only one of basic, bearer and oauth2"],
      [
        { bearer: { token: "abc" }, basic: null, headers: [{ name: "Authorization", value: "x" }] },
        "headers: an Authorization header cannot be set beside bearer",
      ],
      [
        { oauth2: { tokenUrl: "ftp://x/token", clientId: "a", clientSecret: "b" }, basic: null },
        "oauth2.tokenUrl must use http or https",
      ],
      [
        { oauth2: { tokenUrl: "not a url", clientId: "a", clientSecret: "b" }, basic: null },
        "oauth2.tokenUrl must be an absolute http(s) URL",
      ],
      [
        { oauth2: { tokenUrl: "http://u:p@x/token", clientId: "a", clientSecret: "b" }, basic: null },
        "oauth2.tokenUrl must not carry credentials",
      ],
      [
        {
          oauth2: { tokenUrl: "http://169.254.169.254/token", clientId: "a", clientSecret: "b" },
          basic: null,
        },
        "oauth2.tokenUrl is refused by the egress policy",
      ],
      [
        { oauth2: { tokenUrl: `${base}/token/x`, clientSecret: "b" }, basic: null },
        `missing required field "oauth2.clientId"`,
      ],
      [
        { oauth2: { tokenUrl: `${base}/token/x`, clientId: "a" }, basic: null },
        `missing required field "oauth2.clientSecret"`,
      ],
      [
        {
          oauth2: { tokenUrl: `${base}/token/x`, clientId: "a", clientSecret: "b", scope: "a\tb\u0001" },
          basic: null,
        },
        "oauth2.scope must be visible ASCII",
      ],
      [
        { oauth2: { tokenUrl: `${base}/token/x`, clientId: "a", clientSecret: "b", extra: 1 }, basic: null },
        `unknown field "oauth2.extra"`,
      ],
      [
        { tls: { certificate: "junk", privateKey: pki.clientKey } },
        "tls.certificate must hold PEM certificates",
      ],
      [
        {
          tls: {
            certificate: pki.clientCert.replace(/\n[A-Za-z0-9+/]{64}\n/, "\n"),
            privateKey: pki.clientKey,
          },
        },
        "tls.certificate: certificate 1 does not parse",
      ],
      [
        { tls: { certificate: pki.clientCert, privateKey: "junk" } },
        "tls.privateKey must be a PEM private key",
      ],
      [
        { tls: { certificate: pki.clientCert, privateKey: pki.otherKey } },
        "tls.privateKey does not match the public key of tls.certificate",
      ],
      [{ tls: { certificate: pki.clientCert } }, `missing required field "tls.privateKey"`],
      [{ tls: {} }, `missing required field "tls.certificate"`],
      [{ tls: { caBundle: "junk" } }, "tls.caBundle must hold PEM certificates"],
      [{ unknown: 1 }, `unknown field "unknown"`],
    ];
    for (const name of [
      "Host",
      "Content-Length",
      "svc-webhook-signature",
      "SVC-Webhook-Id",
      "Webhook-Signature",
      "webhook-id",
      "Connection",
      "Keep-Alive",
      "Transfer-Encoding",
      "TE",
      "Upgrade",
      "Proxy-Authorization",
      "Trailer",
      "User-Agent",
      "Content-Type",
      "traceparent",
    ])
      bad.push([{ headers: [{ name, value: "x" }] }, `headers[0].name: header "${name}" cannot be set`]);
    for (const [change, message] of bad) {
      const patched = await env.api.call("PATCH", `/configs/${c.id}/auth`, change);
      expect(patched.status, JSON.stringify(change).slice(0, 200)).to.equal(400);
      expect(patched.body.errorMessage, JSON.stringify(change).slice(0, 200)).to.include(message);
      // The same change inside a config write names it under auth., and stores nothing.
      const put = await env.api.call("PUT", `/configs/${c.id}`, {
        endpoint: `${base}/headers/bad-input`,
        eventTypes: ["authtest.changed"],
        auth: change,
      });
      expect(put.status, put.text).to.equal(400);
      expect(put.body.errorMessage).to.include(
        message.startsWith("missing") || message.startsWith("unknown")
          ? message.replace('"', '"auth.')
          : `auth.${message}`.replace("of tls.", "of auth.tls."),
      );
      // No credential is echoed in an error.
      for (const secret of [pki.clientKey, pki.otherKey, "a\r\nX-Injected"])
        expect(patched.text).not.to.include(secret);
    }
    const created = await env.api.call("POST", "/configs", {
      endpoint: `${base}/x`,
      eventTypes: ["authtest.x"],
      auth: { bearer: { token: "bad token" } },
    });
    expect(created.status).to.equal(400);
    expect(created.text).to.include("auth.bearer.token must be an RFC 6750 token");
    expect((await sql(env.api, "SELECT 1 FROM configs WHERE endpoint = $1", [`${base}/x`])).length).to.equal(
      0,
    );
    expect(await sql(env.api, "SELECT * FROM config_auth WHERE config_id = $1", [c.id])).to.deep.equal(
      storedBefore,
    );
    expect((await env.api.call("GET", `/configs/${c.id}`)).body.data).to.deep.equal(configBefore);
    expect(
      (await env.api.call("PATCH", `/configs/00000000-0000-0000-0000-000000000000/auth`, { bearer: null }))
        .status,
    ).to.equal(404);
  });

  it("keeps every credential sealed at rest and out of logs, audit events, attempts, dead letters and workflow histories", async () => {
    const rows = await sql<Record<string, string | null>>(env.api, "SELECT * FROM config_auth");
    for (const r of rows)
      for (const column of [
        "header_values",
        "basic_password",
        "bearer_token",
        "oauth_client_secret",
        "tls_private_key",
      ])
        if (r[column] !== null) expect(r[column], column).to.match(/^sealed1\./);
    const keyBody = (pem: string) => pem.split("\n").slice(1, -2).join("\n");
    const clear = [
      headerValue,
      basic.password,
      bearer,
      client.secret,
      keyBody(pki.clientKey),
      keyBody(pki.strangerKey),
      ...issued,
    ];
    expect(issued.length).to.be.greaterThan(3);
    const places: Record<string, string[]> = { logs: [env.api.process.output] };
    for (const table of ["attempts", "dead_letters", "unsent_deliveries", "events", "configs"])
      places[`table ${table}`] = (
        await sql<{ row: string }>(env.api, `SELECT row_to_json(t)::text AS row FROM ${table} t`)
      ).map((r) => r.row);
    places["table config_auth"] = rows.map((r) => JSON.stringify(r));
    expect(places["table attempts"]!.length).to.be.greaterThan(30);
    const answers: string[] = [];
    const ids = (await sql<{ id: string }>(env.api, "SELECT config_id::text AS id FROM config_auth")).map(
      (r) => r.id,
    );
    for (const p of [
      "/configs",
      "/configs?pageSize=1000",
      ...ids.flatMap((id) => [`/configs/${id}`, `/configs/${id}/auth`, `/configs/${id}/attempts`]),
    ])
      answers.push((await env.api.call("GET", p)).text);
    places["API answers"] = answers;
    places.audit = await streamTexts(env.stream, auditTopic);
    expect(places.audit!.some((a) => a.includes("/auth"))).to.equal(true);
    const workflowIds = await sql<{ workflow_id: string }>(
      env.api,
      "SELECT DISTINCT workflow_id FROM attempts WHERE workflow_id IS NOT NULL",
    );
    places["workflow histories"] = [];
    for (const { workflow_id } of workflowIds)
      places["workflow histories"].push(
        textsOf(await env.temporal.workflow.getHandle(workflow_id).fetchHistory()).join("\n"),
      );
    expect(places["workflow histories"].join("\n")).to.include(ids[0]!);
    for (const [where, texts] of Object.entries(places)) {
      const all = texts.join("\n");
      for (const secret of clear)
        expect(all.includes(secret), `${where} hold a credential in clear`).to.equal(false);
    }
  });
});
