import { randomBytes, randomUUID } from "node:crypto";
import { cp, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { connect } from "nats";
import pg from "pg";
import { applyMigrations, MIGRATIONS_DIR } from "../../common/db/migrate.js";
import { secretContext } from "../../core/config-secrets.js";
import { KeyRing } from "../../core/sealing.js";
import { newKeyLine, parseKeyFile } from "../../core/secrets-key-file.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { deepEventText, eventually } from "../support/poison.js";
import { freePort } from "../support/ports.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";
import { runCommand, ServiceProcess } from "../support/process.js";
import { type Received, Receiver, signedWith } from "../support/receiver.js";
import { testTemporal } from "../support/temporal.js";
import { startWebhooks } from "../support/webhooks-server.js";

// Issue 35, point 2: signing secrets sealed at rest under a key ring. Rows an older version
// wrote in plain text are sealed at startup and keep verifying; nothing a run leaves behind
// (logs, audit, attempts, dead letters, API answers, workflow histories) holds a secret in
// clear; a missing or wrong key stops the service with the key id, never a wrong signature;
// `webhooks secrets rekey` moves every row to the newest key, resumably, while the service runs.

const EVENT_TYPES = ["ledger.committed_transactions"];
const newSecret = () => randomBytes(24).toString("base64");
const MASK = "********";

async function query<R = Record<string, unknown>>(db: TestDatabase, text: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as R[];
  } finally {
    await client.end();
  }
}

const SEALING_MIGRATION = "20261201200000_sealed_secrets";

/** The schema as the previous version left it: every migration before the one of sealed secrets. */
async function migrateToPreviousVersion(db: TestDatabase, dir: string): Promise<void> {
  const previous = path.join(dir, "migrations");
  await cp(MIGRATIONS_DIR, previous, { recursive: true });
  await rm(path.join(previous, SEALING_MIGRATION), { recursive: true });
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const runner = {
      query: async <R>(text: string, params?: unknown[]) => ({
        rows: (await client.query(text, params)).rows as R[],
      }),
      exec: (text: string) => client.query(text),
    };
    await applyMigrations(runner, undefined, previous);
  } finally {
    await client.end();
  }
}

/** Every string and byte array inside `value` (Temporal payloads are bytes), as text. */
function textsOf(value: unknown, out: string[] = []): string[] {
  if (value instanceof Uint8Array) out.push(Buffer.from(value).toString("utf8"));
  else if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) textsOf(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) textsOf(v, out);
  return out;
}

describe("secrets sealed at rest (real PostgreSQL, Temporal, NATS)", function () {
  this.timeout(240_000);
  let db: TestDatabase;
  let dir: string;
  let receiver: Receiver;
  let env: DeliveryEnv | undefined;
  const k1 = newKeyLine("k1");
  const k2 = newKeyLine("k2");
  const keyMaterial = [k1, k2].map((line) => line.split(" ")[1]!);
  /** Each config by the last segment of its endpoint: its id and the clear secrets it signs with. */
  const configs = new Map<string, { id: string; secrets: string[] }>();
  const auditTopic = `audit-${randomBytes(4).toString("hex")}`;

  const keyFile = async (name: string, text: string) => {
    const file = path.join(dir, name);
    await writeFile(file, text, { mode: 0o600 });
    return file;
  };

  const start = async (file: string) => {
    await env?.stop();
    env = await new DeliveryEnv().start(
      ["--audit-topic", auditTopic, "--max-attempts", "3", "--auto-migrate"],
      undefined,
      { SECRETS_KEY_FILE: file },
      db,
    );
    return env;
  };

  const requestsFor = (ik: string): Received[] =>
    receiver.requests.filter((r) => r.body.includes(`"idempotency_key":"${ik}"`));

  const to = (name: string, ik: string) => requestsFor(ik).filter((r) => r.path === `/hook/${name}`);

  /** Every config got the event, signed with every secret it holds (the current one, and a previous one in its grace). */
  async function expectDeliveredAndVerified(ik: string) {
    await eventually(
      "every delivery",
      async () => [...configs.keys()].every((name) => to(name, ik).length > 0),
      60_000,
    );
    for (const [name, { secrets }] of configs) {
      const got = to(name, ik);
      expect(got, `deliveries to ${name}`).to.have.length(1);
      for (const secret of secrets)
        expect(signedWith(secret, got[0]!), `${name} signed with each secret`).to.equal(true);
    }
  }

  /** One event over POST /events, then expectDeliveredAndVerified. */
  async function expectEveryDeliveryVerifies() {
    const event = env!.event();
    const posted = await env!.api.call("POST", "/events", event);
    expect(posted.status, posted.text).to.be.oneOf([200, 202]);
    await expectDeliveredAndVerified(event.idempotency_key);
  }

  const sealedUnder = async () =>
    query<{ key: string; n: number }>(
      db,
      `SELECT split_part(secret, '.', 2) AS key, count(*)::int AS n FROM configs GROUP BY 1 ORDER BY 1`,
    );

  before(async () => {
    db = await createTestDatabase({ migrated: false });
    dir = await mkdtemp(path.join(tmpdir(), "etp-secrets-"));
    receiver = await new Receiver().start();
    receiver.respond = (req, res) => res.writeHead(req.path.endsWith("/failing") ? 500 : 200).end("ok");
  });

  after(async () => {
    await env?.stop();
    await receiver?.stop();
    await db?.drop();
  });

  it("seals the plain secrets an older version stored, and every delivery still verifies with them", async () => {
    // Rows as the previous version wrote them, in its schema: plain secrets, one with a
    // rotated secret in its grace. The service's --auto-migrate then applies the sealing
    // migration, and its startup seals them.
    await migrateToPreviousVersion(db, dir);
    const [a, b] = [randomUUID(), randomUUID()];
    const [aSecret, bSecret, bPrevious] = [newSecret(), newSecret(), newSecret()];
    await query(
      db,
      `INSERT INTO configs (id, endpoint, event_types, secret, previous_secret, previous_secret_expires_at, created_at, updated_at)
        VALUES ($1, $2, $5, $6, NULL, NULL, '2026-01-01Z', '2026-01-01Z'),
               ($3, $4, $5, $7, $8, now() + interval '1 hour', '2026-01-01Z', '2026-01-01Z')`,
      [a, `${receiver.url}/${a}`, b, `${receiver.url}/${b}`, EVENT_TYPES, aSecret, bSecret, bPrevious],
    );
    configs.set(a, { id: a, secrets: [aSecret] });
    configs.set(b, { id: b, secrets: [bSecret, bPrevious] });

    await start(await keyFile("k1.keys", `${k1}\n`));
    expect(env!.api.process.output).to.match(
      new RegExp(`"migration":"${SEALING_MIGRATION}".*"msg":"migration applied"`),
    );
    expect(env!.api.process.output).to.include("secrets at rest: sealed the plain secrets found");
    const rows = await query<{ secret: string; previous_secret: string | null; updated_at: Date }>(
      db,
      "SELECT secret, previous_secret, updated_at FROM configs ORDER BY id",
    );
    for (const r of rows) {
      expect(r.secret).to.match(/^sealed1\.k1\./);
      if (r.previous_secret !== null) expect(r.previous_secret).to.match(/^sealed1\.k1\./);
      // Re-sealing is not a change of the config.
      expect(r.updated_at.toISOString()).to.equal("2026-01-01T00:00:00.000Z");
    }

    await expectEveryDeliveryVerifies();
    expect((await env!.api.call("GET", `/configs/${a}/secret`)).body.data).to.deep.equal({ secret: aSecret });

    // A plain secret stored while the service runs (plain SQL, the entity server) is sealed by
    // the next reconciliation tick.
    const late = randomUUID();
    const lateSecret = newSecret();
    await query(db, "INSERT INTO configs (id, endpoint, event_types, secret) VALUES ($1, $2, $3, $4)", [
      late,
      `${receiver.url}/${late}`,
      EVENT_TYPES,
      lateSecret,
    ]);
    configs.set(late, { id: late, secrets: [lateSecret] });
    await eventually(
      "the late plain secret sealed",
      async () =>
        (
          await query<{ secret: string }>(db, "SELECT secret FROM configs WHERE id = $1", [late])
        )[0]!.secret.startsWith("sealed1.k1."),
      30_000,
    );
    await expectEveryDeliveryVerifies();
    expect((await env!.api.call("GET", `/configs/${b}`)).body.data.secret).to.equal(MASK);
    expect((await env!.api.call("GET", `/configs/${randomUUID()}/secret`)).status).to.equal(404);
  });

  it("lets no secret out in clear: logs, audit, attempts, dead letters, API answers, workflow histories", async () => {
    const api = env!.api;
    const create = async (name: string, body: Record<string, unknown> = {}) => {
      const r = await api.call("POST", "/configs", {
        endpoint: `${receiver.url}/${name}`,
        eventTypes: EVENT_TYPES,
        ...body,
      });
      expect(r.status, r.text).to.equal(200);
      return r.body.data as { id: string; secret: string };
    };
    // A given secret, a generated one rotated with an overlap, and one whose endpoint fails (retries).
    const given = newSecret();
    const c = await create("given", { secret: given });
    expect(c.secret).to.equal(given);
    const replaced = await api.call("PUT", `/configs/${c.id}`, {
      endpoint: `${receiver.url}/given`,
      eventTypes: EVENT_TYPES,
      secret: given,
    });
    expect(replaced.body.data.secret, "a replace masks the secret").to.equal(MASK);
    const d = await create("rotated");
    const rotated = await api.call("PUT", `/configs/${d.id}/secret/change`, { overlap: "1h" });
    expect(rotated.body.data.secret).to.match(/^[A-Za-z0-9+/]{32}$/);
    configs.set("given", { id: c.id, secrets: [given] });
    configs.set("rotated", { id: d.id, secrets: [rotated.body.data.secret, d.secret] });
    const failing = await create("failing");
    const tested = await api.call("POST", `/configs/${c.id}/test`);
    expect(tested.body.data.statusCode).to.equal(200);

    const ik = `leak-${randomBytes(4).toString("hex")}`;
    await env!.publish(env!.event({ idempotency_key: ik }));
    await env!.publish(deepEventText(`poison-${ik}`));
    const ids = [...configs.values()].map((x) => x.id);
    await expectDeliveredAndVerified(ik);
    await eventually(
      "the failing config's attempts and the dead letter",
      async () =>
        (await query(db, "SELECT 1 FROM attempts WHERE config_id = $1 AND retry_attempt >= 1", [failing.id]))
          .length > 0 && (await query(db, "SELECT 1 FROM dead_letters")).length > 0,
      60_000,
    );

    const clear = [...[...configs.values()].flatMap((x) => x.secrets), failing.secret];
    const places: Record<string, string[]> = { logs: [env!.api.process.output] };
    for (const table of ["attempts", "dead_letters", "unsent_deliveries", "events", "configs"])
      places[`table ${table}`] = (
        await query<{ row: string }>(db, `SELECT row_to_json(t)::text AS row FROM ${table} t`)
      ).map((r) => r.row);
    expect(places["table attempts"]!.length).to.be.greaterThan(ids.length);
    expect(places["table dead_letters"]!.length).to.be.greaterThan(0);

    const answers: string[] = [];
    const webhookIds = await query<{ webhook_id: string }>(
      db,
      "SELECT DISTINCT webhook_id::text FROM attempts",
    );
    for (const p of [
      "/configs",
      "/configs?pageSize=100",
      `/configs?id=${c.id}`,
      ...ids.flatMap((id) => [`/configs/${id}`, `/configs/${id}/attempts`]),
      `/configs/${failing.id}/attempts`,
      "/dead-letters",
      ...webhookIds.map((w) => `/webhooks/${w.webhook_id}`),
    ])
      answers.push((await api.call("GET", p)).text);
    answers.push((await api.call("PUT", `/configs/${c.id}/deactivate`)).text);
    answers.push((await api.call("PUT", `/configs/${c.id}/activate`)).text);
    answers.push(tested.text);
    places["API answers"] = answers;

    const nc = await connect({ servers: "nats://127.0.0.1:4222" });
    try {
      const consumer = await nc.jetstream().consumers.get(env!.stream, { filterSubjects: auditTopic });
      const audit: string[] = [];
      for (let m = await consumer.next({ expires: 2000 }); m; m = await consumer.next({ expires: 2000 }))
        audit.push(m.string());
      places.audit = audit;
    } finally {
      await nc.close();
    }
    expect(places.audit!.length).to.be.greaterThan(5);

    const workflowIds = await query<{ workflow_id: string }>(
      db,
      "SELECT DISTINCT workflow_id FROM attempts WHERE workflow_id IS NOT NULL",
    );
    expect(workflowIds.length).to.be.greaterThan(ids.length);
    places["workflow histories"] = [];
    for (const { workflow_id } of workflowIds)
      places["workflow histories"].push(
        textsOf(await env!.temporal.workflow.getHandle(workflow_id).fetchHistory()).join("\n"),
      );
    // The search reads inside the payloads (bytes): the histories name the configs there.
    expect(places["workflow histories"].join("\n")).to.include(c.id);

    for (const [where, texts] of Object.entries(places)) {
      const all = texts.join("\n");
      for (const secret of [...clear, ...keyMaterial])
        expect(all.includes(secret), `${where} hold a secret or key in clear`).to.equal(false);
    }
    const masked = JSON.parse((await api.call("GET", `/configs/${c.id}`)).text).data.secret;
    expect(masked).to.equal(MASK);
    expect((await api.call("GET", `/configs/${c.id}/secret`)).body.data.secret).to.equal(given);
    await api.call("DELETE", `/configs/${failing.id}`);
  });

  it("fails a send whose secret does not open (a key the ring lacks, a value moved from another row), saying why; refuses to start on a lost key", async () => {
    const lost = new KeyRing([{ id: "lost", key: randomBytes(32) }]);
    const id = randomUUID();
    await query(db, "INSERT INTO configs (id, endpoint, event_types, secret) VALUES ($1, $2, $3, $4)", [
      id,
      `${receiver.url}/${id}`,
      EVENT_TYPES,
      lost.seal(newSecret(), secretContext(id, "secret")),
    ]);
    const event = env!.event();
    await env!.api.call("POST", "/events", event);
    await eventually("the attempt", async () => (await env!.attempts(id)).length > 0, 60_000);
    const [attempt] = await env!.attempts(id);
    expect(attempt!.status).to.be.oneOf(["to retry", "retrying", "failed"]);
    expect(attempt!.status_code).to.equal(0);
    expect(attempt!.error).to.match(
      /^not sent: configs\.secret:\S+ is sealed under key "lost", which the key ring does not hold/,
    );
    expect(receiver.requests.filter((r) => r.path === `/hook/${id}`)).to.have.length(0);
    await query(db, "DELETE FROM configs WHERE id = $1", [id]);

    // A sealed value copied onto another config's row (a known key, the wrong row) does not open there.
    const from = configs.get("given")!.id;
    const onto = configs.get("rotated")!.id;
    const [original] = await query<{ secret: string }>(db, "SELECT secret FROM configs WHERE id = $1", [
      onto,
    ]);
    await query(db, "UPDATE configs SET secret = (SELECT secret FROM configs WHERE id = $1) WHERE id = $2", [
      from,
      onto,
    ]);
    const moved = env!.event();
    await env!.api.call("POST", "/events", moved);
    const notSent = async () =>
      (await env!.attempts(onto)).filter((r) => /^not sent: /.test(r.error ?? "")).map((r) => r.error);
    await eventually("the attempt of the moved secret", async () => (await notSent()).length > 0, 60_000);
    expect((await notSent())[0]).to.match(
      /^not sent: configs\.secret:\S+ does not open with key "k1": .*copied from another row/,
    );
    // The other config's delivery of the same event runs on its own and may end after this one.
    await eventually(
      "the other config's delivery",
      async () => to("given", moved.idempotency_key).length > 0,
      60_000,
    );
    expect(to("rotated", moved.idempotency_key)).to.have.length(0);
    expect(to("given", moved.idempotency_key)).to.have.length(1);
    await query(db, "UPDATE configs SET secret = $1 WHERE id = $2", [original!.secret, onto]);
    await env!.api.call("DELETE", `/configs/${onto}`);
    configs.delete("rotated");
    await query(db, "INSERT INTO configs (id, endpoint, event_types, secret) VALUES ($1, $2, $3, $4)", [
      id,
      `${receiver.url}/${id}`,
      EVENT_TYPES,
      lost.seal(newSecret(), secretContext(id, "secret")),
    ]);

    await env!.stop();
    env = undefined;
    const refused = await startWebhooks({ db, env: { SECRETS_KEY_FILE: path.join(dir, "k1.keys") } }).then(
      () => "started",
      (err: Error) => err.message,
    );
    expect(refused).to.match(
      /secrets are sealed under key "lost" \(1 stored secret\(s\), e\.g\. config [0-9a-f-]+\), which the key ring \(k1\) does not hold/,
    );
    await query(db, "DELETE FROM configs WHERE id = $1", [id]);
  });

  it("refuses to start on a wrong or missing key ring, naming the problem and never the key", async () => {
    const serve = async (env: Record<string, string>, args: string[] = []) => {
      const r = await runCommand(
        "webhooks",
        [
          "serve",
          "--listen",
          `127.0.0.1:${await freePort()}`,
          "--storage-sqldb-conn-string",
          db.url,
          ...args,
        ],
        env,
      );
      expect(r.code).to.equal(1);
      for (const key of keyMaterial) expect(r.stderr + r.stdout).to.not.include(key);
      return r.stderr;
    };
    const otherBytes = await keyFile("other.keys", `${newKeyLine("k1")}\n`);
    expect(await serve({ SECRETS_KEY_FILE: otherBytes })).to.match(
      /key "k1" of the key ring does not open \d+ stored secret\(s\), e\.g\. config [0-9a-f-]+: .*other bytes under that id/,
    );
    expect(await serve({ SECRETS_KEY_FILE: path.join(dir, "missing.keys") })).to.match(
      /--secrets-key-file \S+missing\.keys: cannot read the key file: ENOENT/,
    );
    const malformed = await keyFile("malformed.keys", "# ring\nk1 not-base64\n");
    expect(await serve({ SECRETS_KEY_FILE: malformed })).to.match(
      /malformed\.keys, line 2: key "k1" must be standard base64 of 32 bytes/,
    );
    expect(await serve({ SECRETS_KEY_FILE: "" })).to.match(
      /PostgreSQL needs a key ring: pass --secrets-key-file FILE .* or accept plain-text secrets explicitly with --insecure-plaintext-secrets/,
    );
    expect(await serve({ SECRETS_KEY_FILE: "" }, ["--insecure-plaintext-secrets"])).to.match(
      /secrets are sealed under key "k1" .* --insecure-plaintext-secrets gives no key ring/,
    );
    expect(
      await serve({ SECRETS_KEY_FILE: path.join(dir, "k1.keys") }, ["--insecure-plaintext-secrets"]),
    ).to.match(/exclude each other/);
  });

  it("rekey moves every secret to the newest key in resumable batches while the service runs", async () => {
    await start(path.join(dir, "k1.keys"));
    for (let i = 0; i < 4; i++) {
      const r = await env!.api.call("POST", "/configs", {
        endpoint: `${receiver.url}/r${i}`,
        eventTypes: EVENT_TYPES,
      });
      configs.set(`r${i}`, { id: r.body.data.id, secrets: [r.body.data.secret] });
    }
    // Step 1 of a rotation: every process gets the ring with the new key last; new writes use it.
    const both = await keyFile("k1k2.keys", `${k1}\n${k2}\n`);
    await start(both);
    const fresh = (
      await env!.api.call("POST", "/configs", {
        endpoint: `${receiver.url}/pending`,
        eventTypes: EVENT_TYPES,
      })
    ).body.data;
    expect(
      (await query<{ secret: string }>(db, "SELECT secret FROM configs WHERE id = $1", [fresh.id]))[0]!
        .secret,
    ).to.match(/^sealed1\.k2\./);
    await env!.api.call("DELETE", `/configs/${fresh.id}`);
    const total = configs.size;
    expect((await query<{ n: number }>(db, "SELECT count(*)::int AS n FROM configs"))[0]!.n).to.equal(total);
    expect(await sealedUnder()).to.deep.equal([{ key: "k1", n: total }]);

    // Step 2: rekey, stopped after its first batch, then run again.
    const rekeyArgs = ["secrets", "rekey", "--storage-sqldb-conn-string", db.url, "--batch-size", "1"];
    const stopped = new ServiceProcess("webhooks", [...rekeyArgs, "--pause", "30s"], {
      SECRETS_KEY_FILE: both,
    });
    await stopped.waitForOutput(`rekey: 1/${total} configs done, 1 re-sealed under key "k2"`, 30_000);
    await stopped.stop("SIGKILL");
    expect(await sealedUnder()).to.deep.equal([
      { key: "k1", n: total - 1 },
      { key: "k2", n: 1 },
    ]);
    await expectEveryDeliveryVerifies();
    const resumed = await runCommand("webhooks", rekeyArgs, { SECRETS_KEY_FILE: both });
    expect(resumed.code, resumed.stderr).to.equal(0);
    expect(resumed.stdout).to.include(`rekey: ${total - 1}/${total - 1} configs done`);
    expect(resumed.stdout).to.include(
      `rekey: ${total - 1} configs re-sealed under key "k2"; 0 left under other keys or plain`,
    );
    expect(await sealedUnder()).to.deep.equal([{ key: "k2", n: total }]);
    const previous = await query<{ previous_secret: string }>(
      db,
      "SELECT previous_secret FROM configs WHERE previous_secret IS NOT NULL",
    );
    expect(previous.length).to.be.greaterThan(0);
    for (const r of previous) expect(r.previous_secret).to.match(/^sealed1\.k2\./);
    await expectEveryDeliveryVerifies();

    // Step 3: the old key leaves the ring; nothing needs it any more.
    await start(await keyFile("k2.keys", `${k2}\n`));
    await expectEveryDeliveryVerifies();
  });

  it("stores plain secrets only when told to with --insecure-plaintext-secrets", async () => {
    const api = await startWebhooks({
      env: { SECRETS_KEY_FILE: "" },
      args: ["--insecure-plaintext-secrets"],
    });
    try {
      expect(api.process.output).to.include("signing secrets are stored in plain text");
      const created = (
        await api.call("POST", "/configs", { endpoint: "https://plain.test/x", eventTypes: EVENT_TYPES })
      ).body.data;
      const [row] = await query<{ secret: string }>(api.db, "SELECT secret FROM configs WHERE id = $1", [
        created.id,
      ]);
      expect(row!.secret).to.equal(created.secret);
      // A value that looks sealed would read back as sealed and never open: refused, naming it.
      const looksSealed = await api.call("POST", "/configs", {
        endpoint: "https://plain.test/y",
        eventTypes: EVENT_TYPES,
        secret: "sealed1.k1.AAAA.BBBB",
      });
      // (A signing secret is base64, which has no ".": it can never look sealed.)
      expect(looksSealed.status, looksSealed.text).to.equal(400);
      const token = await api.call("PATCH", `/configs/${created.id}/auth`, {
        bearer: { token: "sealed1.x.y.z" },
      });
      expect(token.status, token.text).to.equal(400);
      expect(token.body.errorMessage).to.match(/config_auth\.bearer_token starts with "sealed1\."/);
      expect((await api.call("GET", `/configs/${created.id}/auth`)).body.data).to.deep.equal({});
    } finally {
      await api.stop();
    }
  });

  it("starts with one row that does not open (copied from another row), logging and counting it; serves the others", async () => {
    // The ring of the rekey test: every secret is under k2 since.
    const ring = path.join(dir, "k1k2.keys");
    await start(ring);
    const made = [];
    for (let i = 0; i < 3; i++)
      made.push(
        (
          await env!.api.call("POST", "/configs", {
            endpoint: `${receiver.url}/u${i}`,
            eventTypes: EVENT_TYPES,
          })
        ).body.data.id as string,
      );
    // The first row the startup check samples (by config id) gets another row's sealed secret.
    const [first] = await query<{ id: string }>(
      db,
      "SELECT id::text AS id FROM configs WHERE left(secret, 8) = 'sealed1.' ORDER BY id::text LIMIT 1",
    );
    const other = made.find((id) => id !== first!.id)!;
    await query(db, "UPDATE configs SET secret = (SELECT secret FROM configs WHERE id = $1) WHERE id = $2", [
      other,
      first!.id,
    ]);
    const restarted = await start(ring);
    expect(restarted.api.process.output).to.match(/stored secrets that do not open with their key/);
    expect(restarted.api.process.output).to.include(first!.id);
    const metrics = await (await fetch(`${restarted.api.url}/metrics`)).text();
    expect(metrics).to.match(/^webhooks_unreadable_secrets 1$/m);
    const served = await restarted.api.call("GET", `/configs/${other}`);
    expect(served.status).to.equal(200);
    await query(db, "DELETE FROM configs WHERE id = $1", [first!.id]);
  });

  it("generates a key in the data dir on the embedded database, with a warning saying how to supply one", async () => {
    const temporal = await testTemporal();
    const dataDir = await mkdtemp(path.join(tmpdir(), "etp-secrets-pglite-"));
    const port = await freePort();
    const p = new ServiceProcess(
      "webhooks",
      [
        "serve",
        "--auto-migrate",
        "--data-dir",
        dataDir,
        "--listen",
        `127.0.0.1:${port}`,
        "--temporal-address",
        temporal.address,
        "--audit-topic",
        "",
      ],
      { DATABASE_URL: "", SECRETS_KEY_FILE: "" },
    );
    try {
      await p.waitHealthy(`http://127.0.0.1:${port}/_healthcheck`, 90_000);
      expect(p.output).to.match(
        /secrets at rest are sealed with a key generated now in the data dir.*--secrets-key-file FILE or SECRETS_KEY_FILE/,
      );
      const file = path.join(dataDir, "secrets.keys");
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
      const ring = parseKeyFile(await readFile(file, "utf8"), file);
      const created = await fetch(`http://127.0.0.1:${port}/configs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ endpoint: "https://embedded.test/hook", eventTypes: EVENT_TYPES }),
      }).then((r) => r.json() as Promise<{ data: { id: string; secret: string } }>);
      const read = await fetch(`http://127.0.0.1:${port}/configs/${created.data.id}/secret`).then(
        (r) => r.json() as Promise<{ data: { secret: string } }>,
      );
      expect(read.data.secret).to.equal(created.data.secret);
      expect(ring.ids).to.have.length(1);
    } finally {
      expect(await p.stop()).to.equal(0);
    }
  });
});
