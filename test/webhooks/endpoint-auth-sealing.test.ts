import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TLSSocket } from "node:tls";
import { expect } from "chai";
import { newKeyLine } from "../../core/secrets-key-file.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { eventually, sql } from "../support/poison.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";
import { runCommand } from "../support/process.js";
import { makeTestPki } from "../support/test-pki.js";
import { startWebhooks } from "../support/webhooks-server.js";

// Issue 35, points 2 and 3 together: endpoint credentials are sealed under the key ring like
// signing secrets. A plain credential (SQL, --insecure-plaintext-secrets) is sealed by the
// running service; `webhooks secrets rekey` moves every credential to the newest key and
// every kind keeps working; a ring without the key a credential needs stops the startup,
// naming the key and the column.

const COLUMNS = ["header_values", "basic_password", "bearer_token", "oauth_client_secret", "tls_private_key"];

describe("endpoint credentials under the key ring (real PostgreSQL, Temporal, NATS)", function () {
  this.timeout(240_000);
  let db: TestDatabase;
  let dir: string;
  let env: DeliveryEnv | undefined;
  let plain: http.Server;
  let tls: https.Server;
  const password = `pw-${randomBytes(8).toString("hex")}`;
  const bearer = `bt-${randomBytes(8).toString("hex")}`;
  const clientSecret = `cs-${randomBytes(8).toString("hex")}`;
  const got: string[] = [];
  let base = "";
  let tlsBase = "";
  const k1 = newKeyLine("k1");
  const k2 = newKeyLine("k2");

  const listen = async (server: http.Server) => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    return (server.address() as AddressInfo).port;
  };

  before(async () => {
    db = await createTestDatabase();
    dir = await mkdtemp(path.join(tmpdir(), "etp-auth-keys-"));
    await writeFile(path.join(dir, "k1.keys"), `${k1}\n`, { mode: 0o600 });
    await writeFile(path.join(dir, "k1k2.keys"), `${k1}\n${k2}\n`, { mode: 0o600 });
    await writeFile(path.join(dir, "k2.keys"), `${k2}\n`, { mode: 0o600 });
    const pki = await makeTestPki();
    // Accepts only requests carrying every credential of its path's kind.
    plain = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (req.url === "/token") {
          const ok =
            req.headers.authorization === `Basic ${Buffer.from(`app:${clientSecret}`).toString("base64")}`;
          res.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
          res.end(
            JSON.stringify(ok ? { access_token: "tok", expires_in: 3600 } : { error: "invalid_client" }),
          );
          return;
        }
        const ok =
          req.url === "/basic"
            ? req.headers.authorization === `Basic ${Buffer.from(`u:${password}`).toString("base64")}` &&
              req.headers["x-api-key"] === "hv"
            : req.url === "/bearer"
              ? req.headers.authorization === `Bearer ${bearer}`
              : req.headers.authorization === "Bearer tok";
        if (ok) got.push(req.url ?? "");
        res.writeHead(ok ? 200 : 401).end();
      });
    });
    base = `http://127.0.0.1:${await listen(plain)}`;
    tls = https.createServer(
      { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        req.resume();
        const ok = (req.socket as TLSSocket).authorized;
        if (ok) got.push("/tls");
        res.writeHead(ok ? 200 : 403).end();
      },
    );
    tlsBase = `https://127.0.0.1:${await listen(tls)}`;
    env = await start("k1.keys");
    for (const [endpoint, auth] of [
      [
        `${base}/basic`,
        { basic: { username: "u", password }, headers: [{ name: "X-Api-Key", value: "hv" }] },
      ],
      [`${base}/bearer`, { bearer: { token: bearer } }],
      [`${base}/oauth`, { oauth2: { tokenUrl: `${base}/token`, clientId: "app", clientSecret } }],
      [
        `${tlsBase}/tls`,
        { tls: { certificate: pki.clientCert, privateKey: pki.clientKey, caBundle: pki.ca } },
      ],
    ] as const) {
      const r = await env.api.call("POST", "/configs", { endpoint, eventTypes: ["sealing.check"], auth });
      expect(r.status, r.text).to.equal(200);
    }
  });

  after(async () => {
    await env?.stop();
    plain?.close();
    tls?.close();
    await db?.drop();
  });

  async function start(keyFile: string) {
    await env?.stop();
    env = await new DeliveryEnv().start(
      ["--auto-migrate"],
      undefined,
      { SECRETS_KEY_FILE: path.join(dir, keyFile) },
      db,
    );
    return env;
  }

  /** The key id of every stored credential, counted. */
  const keysInUse = async () =>
    (
      await sql<{ key: string; n: number }>(
        env!.api,
        `SELECT key, count(*)::int AS n FROM (${COLUMNS.map(
          (c) => `SELECT split_part(${c}, '.', 2) AS key FROM config_auth WHERE ${c} IS NOT NULL`,
        ).join(" UNION ALL ")}) s GROUP BY key ORDER BY key`,
      )
    ).map((r) => `${r.key}:${r.n}`);

  /** One event; every kind's receiver accepts its delivery. */
  async function expectEveryKindDelivered() {
    got.length = 0;
    const r = await env!.api.call("POST", "/events", env!.event({ app: "sealing", type: "check" }));
    expect(r.status, r.text).to.be.oneOf([200, 202]);
    await eventually("every kind delivered", async () => got.length === 4, 60_000);
    expect([...got].sort()).to.deep.equal(["/basic", "/bearer", "/oauth", "/tls"]);
  }

  it("seals every credential kind, and seals a plain one the running service finds", async () => {
    expect(await keysInUse()).to.deep.equal(["k1:5"]);
    await sql(env!.api, "UPDATE config_auth SET bearer_token = $1 WHERE bearer_token IS NOT NULL", [bearer]);
    await eventually(
      "the plain bearer token sealed",
      async () => (await keysInUse()).join() === "k1:5",
      30_000,
    );
    await expectEveryKindDelivered();
  });

  it("rekey moves every credential to the newest key; a ring without it refuses to start, naming key and column", async () => {
    await start("k1k2.keys");
    const rekey = await runCommand(
      "webhooks",
      ["secrets", "rekey", "--storage-sqldb-conn-string", db.url, "--batch-size", "2"],
      { SECRETS_KEY_FILE: path.join(dir, "k1k2.keys") },
    );
    expect(rekey.code, rekey.stderr).to.equal(0);
    expect(rekey.stdout).to.include('rekey: 4 endpoint credential rows re-sealed under key "k2"');
    expect(rekey.stdout).to.include("0 left under other keys or plain");
    expect(await keysInUse()).to.deep.equal(["k2:5"]);
    await expectEveryKindDelivered();
    // Running it again finds nothing to do.
    const again = await runCommand("webhooks", ["secrets", "rekey", "--storage-sqldb-conn-string", db.url], {
      SECRETS_KEY_FILE: path.join(dir, "k1k2.keys"),
    });
    expect(again.stdout).not.to.include("endpoint credential rows");

    // Everything is under k2 now: a ring of k1 alone refuses to start; one of k2 alone serves.
    await env!.stop();
    env = undefined;
    const k1Only = await startWebhooks({ db, env: { SECRETS_KEY_FILE: path.join(dir, "k1.keys") } }).then(
      () => "started",
      (err: Error) => err.message,
    );
    expect(k1Only).to.match(/sealed under key "k2"/);
    await start("k2.keys");
    await expectEveryKindDelivered();
  });

  it("names the credential column when its key is missing", async () => {
    // A credential sealed under a key no ring holds, copied in by SQL.
    const [row] = await sql<{ config_id: string }>(
      env!.api,
      "SELECT config_id::text FROM config_auth WHERE bearer_token IS NOT NULL",
    );
    await sql(env!.api, "UPDATE config_auth SET bearer_token = $1 WHERE config_id = $2", [
      "sealed1.lost.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      row!.config_id,
    ]);
    await env!.stop();
    env = undefined;
    const refused = await startWebhooks({ db, env: { SECRETS_KEY_FILE: path.join(dir, "k2.keys") } }).then(
      () => "started",
      (err: Error) => err.message,
    );
    expect(refused).to.match(
      /credentials are sealed under key "lost" \(1 endpoint credential\(s\) in config_auth\.bearer_token, e\.g\. config [0-9a-f-]+\), which the key ring \(k2\) does not hold/,
    );
  });
});
