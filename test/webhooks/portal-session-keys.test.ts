import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { decodeProtectedHeader } from "jose";
import { fromRoot } from "../../common/paths.js";
import { sql } from "../support/poison.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/**
 * Portal tokens and the secrets key ring: a key appended with `secrets new-key` keeps live
 * sessions valid; removing the key that signed a token ends it; no key ring, no sessions.
 */
describe("consumer portal session tokens and the secrets key ring", function () {
  this.timeout(120_000);
  let dir: string;
  let keyFile: string;
  let api: WebhooksUnderTest | undefined;

  const serve = (db?: WebhooksUnderTest["db"]) =>
    startWebhooks({ ...(db ? { db } : {}), args: ["--secrets-key-file", keyFile, "--audit-topic", ""] });
  const current = (token: string) =>
    api!.call("GET", "/portal-sessions/current", undefined, { authorization: `Bearer ${token}` });
  const newSession = async () => {
    const r = await api!.call("POST", "/tenants/uid:default/portal-sessions", {});
    expect(r.status, r.text).to.equal(201);
    return r.body as { id: string; token: string };
  };

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "portal-keys-"));
    keyFile = path.join(dir, "secrets.keys");
    await writeFile(keyFile, `k1 ${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
  });

  after(async () => {
    if (api) {
      await api.process.stop();
      await api.db.drop();
    }
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps a session valid across `secrets new-key` and a restart; ends it when its key leaves the ring", async () => {
    api = await serve();
    const before = await newSession();
    expect(decodeProtectedHeader(before.token).kid).to.equal("k1");

    const { stdout } = await promisify(execFile)(process.execPath, [
      fromRoot("dist", "cmd", "webhooks.js"),
      "secrets",
      "new-key",
    ]);
    await appendFile(keyFile, stdout);
    const newId = stdout.split(" ")[0]!;
    const db = api.db;
    await api.process.stop();
    api = await serve(db);
    expect((await current(before.token)).status, "signed under the older key").to.equal(200);
    const after = await newSession();
    expect(decodeProtectedHeader(after.token).kid).to.equal(newId);
    expect((await current(after.token)).status).to.equal(200);

    // The old key removed (step 4 of rotating keys): what it signed no longer verifies.
    const lines = (await readFile(keyFile, "utf8")).split("\n").filter((l) => !l.startsWith("k1 "));
    await writeFile(keyFile, lines.join("\n"), { mode: 0o600 });
    await api.process.stop();
    api = await serve(db);
    const old = await current(before.token);
    expect(old.status).to.equal(401);
    expect(old.body.errorCode).to.equal("UNAUTHORIZED");
    expect(old.body.errorMessage).to.contain("key this deployment does not hold");
    expect((await current(after.token)).status).to.equal(200);
  });

  it("refuses sessions with a clear 503 under --insecure-plaintext-secrets, storing nothing", async () => {
    const plain = await startWebhooks({
      env: { SECRETS_KEY_FILE: "" },
      args: ["--insecure-plaintext-secrets", "--audit-topic", ""],
    });
    try {
      const r = await plain.call("POST", "/tenants/uid:default/portal-sessions", {});
      expect(r.status, r.text).to.equal(503);
      expect(r.body.errorCode).to.equal("UNAVAILABLE");
      expect(r.body.errorMessage).to.contain("--insecure-plaintext-secrets");
      expect(await sql(plain, "SELECT id FROM portal_sessions")).to.deep.equal([]);
      const token = (await newSession()).token;
      const used = await plain.call("GET", "/configs", undefined, { authorization: `Bearer ${token}` });
      expect(used.status).to.equal(401);
      expect(used.body.errorCode).to.equal("UNAUTHORIZED");
      // The API itself works as before.
      expect((await plain.call("GET", "/configs")).status).to.equal(200);
    } finally {
      await plain.stop();
    }
  });
});
