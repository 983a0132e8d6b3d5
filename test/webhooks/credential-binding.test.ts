import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import pg from "pg";
import { DeliveryEnv } from "../support/delivery-env.js";
import { eventually, sql } from "../support/poison.js";
import { fixturePortalAssets } from "../support/portal.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks } from "../support/webhooks-server.js";

// A stored credential is bound to the origin of the endpoint (and the
// token URL) it was set for; credentials never go over plain http:// except to loopback while
// private addresses are allowed; a portal session without "secrets" cannot change the signing
// secret through PUT /configs/{id}. Real stack (PostgreSQL, NATS, Temporal); the "attacker"
// is a second receiver on another port, i.e. another origin.

const hex = (n: number) => randomBytes(n).toString("hex");
/** Addresses of TEST-NET-3 (RFC 5737): refused before any send, never contacted. */
const REMOTE_HTTP = "http://203.0.113.7/hook";
const REMOTE_HTTPS = "https://203.0.113.8/hook";

describe("credentials bound to their endpoint origin and token URL (real PostgreSQL, Temporal, NATS)", function () {
  this.timeout(240_000);
  const env = new DeliveryEnv();
  let home: Receiver;
  let attacker: Receiver;
  let assets: string;
  const bearer = `bt${hex(12)}`;
  const clientSecret = `cs-${hex(12)}`;

  const origin = (url: string) => new URL(url).origin;
  const call = (method: string, p: string, body?: unknown, token?: string) =>
    env.api.call(method, p, body, token ? { authorization: `Bearer ${token}` } : {});
  const create = async (body: Record<string, unknown>, token?: string) => {
    const r = await call("POST", "/configs", { eventTypes: ["cred.*"], ...body }, token);
    expect(r.status, r.text).to.equal(200);
    return r.body.data as { id: string; endpoint: string; secret: string };
  };
  const secretOf = async (id: string) =>
    (await call("GET", `/configs/${id}/secret`)).body.data.secret as string;
  const refused = (r: { status: number; text: string; body: { errorMessage?: string } }, field: string) => {
    expect(r.status, r.text).to.equal(400);
    expect(r.body.errorMessage, r.text).to.contain(field);
  };

  before(async () => {
    assets = await fixturePortalAssets();
    await env.start(["--portal-assets-dir", assets]);
    home = await new Receiver().start();
    attacker = await new Receiver().start();
  });

  after(async () => {
    await home?.stop();
    await attacker?.stop();
    await env.stop();
    if (assets) await rm(assets, { recursive: true, force: true });
  });

  it("refuses PUT /configs/{id} to another origin unless each stored credential is given again (400 naming it); a path of the same origin keeps them", async () => {
    const kinds: [string, Record<string, unknown>, string, Record<string, unknown>][] = [
      [
        "headers",
        {
          headers: [
            { name: "X-Api-Key", value: `k-${hex(8)}` },
            { name: "X-Team", value: "blue" },
          ],
        },
        "auth.headers[0].value",
        {
          headers: [
            { name: "X-Api-Key", value: "new-key" },
            { name: "X-Team", value: "blue" },
          ],
        },
      ],
      [
        "basic",
        { basic: { username: "acme", password: `pw-${hex(8)}` } },
        "auth.basic.password",
        { basic: { password: "new-pw" } },
      ],
      ["bearer", { bearer: { token: bearer } }, "auth.bearer.token", { bearer: { token: "newtoken" } }],
      [
        "oauth2",
        { oauth2: { tokenUrl: `${origin(home.url)}/token`, clientId: "c1", clientSecret } },
        "auth.oauth2.clientSecret",
        { oauth2: { clientSecret: "new-secret" } },
      ],
    ];
    for (const [kind, auth, field, again] of kinds) {
      const c = await create({ endpoint: home.url, auth });
      const moved = await call("PUT", `/configs/${c.id}`, { endpoint: attacker.url, eventTypes: ["cred.*"] });
      refused(moved, field);
      expect(moved.body.errorMessage, kind).to.contain("endpoint");
      // Giving some other credential again is not enough for this one.
      if (kind === "headers") {
        const partly = await call("PUT", `/configs/${c.id}`, {
          endpoint: attacker.url,
          eventTypes: ["cred.*"],
          auth: { headers: [{ name: "X-Api-Key", value: "new-key" }, { name: "X-Team" }] },
        });
        refused(partly, "auth.headers[1].value");
      }
      const kept = (await call("GET", `/configs/${c.id}`)).body.data;
      expect(kept.endpoint, kind).to.equal(home.url);
      expect(Object.keys(kept.auth), kind).to.deep.equal([kind]);
      // Same origin, another path: the credentials stay.
      const samePath = await call("PUT", `/configs/${c.id}`, {
        endpoint: `${origin(home.url)}/other`,
        eventTypes: ["cred.*"],
      });
      expect(samePath.status, samePath.text).to.equal(200);
      expect(Object.keys(samePath.body.data.auth), kind).to.deep.equal([kind]);
      // Given again in the same request: the move is allowed.
      const withIt = await call("PUT", `/configs/${c.id}`, {
        endpoint: attacker.url,
        eventTypes: ["cred.*"],
        auth: again,
      });
      expect(withIt.status, `${kind}: ${withIt.text}`).to.equal(200);
      // Or removed in the same request.
      const d = await create({ endpoint: home.url, auth });
      const removed = await call("PUT", `/configs/${d.id}`, {
        endpoint: attacker.url,
        eventTypes: ["cred.none"],
        auth: { [kind]: null },
      });
      expect(removed.status, `${kind}: ${removed.text}`).to.equal(200);
      expect(removed.body.data.auth ?? {}, kind).to.deep.equal({});
    }
    // A scheme or port change is another origin too.
    const c = await create({ endpoint: home.url, auth: { bearer: { token: bearer } } });
    const port = new URL(home.url).port;
    for (const other of [`https://127.0.0.1:${port}/hook`, `http://localhost:${port}/hook`])
      refused(
        await call("PUT", `/configs/${c.id}`, { endpoint: other, eventTypes: ["cred.*"] }),
        "auth.bearer.token",
      );
  });

  it("refuses a new oauth2.tokenUrl without the client secret again (PATCH and PUT), so the secret never goes to it", async () => {
    const c = await create({
      endpoint: home.url,
      auth: { oauth2: { tokenUrl: `${origin(home.url)}/token`, clientId: "c1", clientSecret } },
    });
    const elsewhere = `${origin(attacker.url)}/token`;
    refused(
      await call("PATCH", `/configs/${c.id}/auth`, { oauth2: { tokenUrl: elsewhere } }),
      "oauth2.clientSecret",
    );
    // Another path of the same server is another token URL as well.
    refused(
      await call("PATCH", `/configs/${c.id}/auth`, {
        oauth2: { tokenUrl: `${origin(home.url)}/other-token` },
      }),
      "oauth2.clientSecret",
    );
    refused(
      await call("PUT", `/configs/${c.id}`, {
        endpoint: home.url,
        eventTypes: ["cred.*"],
        auth: { oauth2: { tokenUrl: elsewhere } },
      }),
      "auth.oauth2.clientSecret",
    );
    expect((await call("GET", `/configs/${c.id}/auth`)).body.data.oauth2.tokenUrl).to.equal(
      `${origin(home.url)}/token`,
    );
    // A test delivery still asks the stored token URL: the attacker's server sees nothing.
    await call("GET", `/configs/${c.id}/test`);
    expect(attacker.requests).to.have.length(0);
    // Changing other OAuth fields keeps the secret; the token URL with the secret is allowed.
    expect((await call("PATCH", `/configs/${c.id}/auth`, { oauth2: { scope: "events" } })).status).to.equal(
      200,
    );
    const moved = await call("PATCH", `/configs/${c.id}/auth`, {
      oauth2: { tokenUrl: elsewhere, clientSecret: "other" },
    });
    expect(moved.status, moved.text).to.equal(200);
  });

  it("checks a move and a concurrent credential change under the config's row lock, so neither slips past the other", async () => {
    const c = await create({ endpoint: home.url });
    // A transaction of the test holds the config's row while a PATCH and then a PUT arrive.
    const locker = new pg.Client({ connectionString: env.api.db.url });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("SELECT 1 FROM configs WHERE id = $1 FOR UPDATE", [c.id]);
      const patch = call("PATCH", `/configs/${c.id}/auth`, { bearer: { token: bearer } });
      await sleep(300);
      const put = call("PUT", `/configs/${c.id}`, { endpoint: attacker.url, eventTypes: ["cred.*"] });
      await sleep(300);
      await locker.query("COMMIT");
      const [patched, moved] = await Promise.all([patch, put]);
      expect(patched.status, patched.text).to.equal(200);
      // The PUT sees the token the PATCH stored for the old origin, and moves nothing.
      refused(moved, "auth.bearer.token");
      expect((await call("GET", `/configs/${c.id}`)).body.data.endpoint).to.equal(home.url);
    } finally {
      await locker.end();
    }
  });

  it("refuses credentials over plain http:// beyond loopback (endpoint and token URL), keeps stored ones delivering", async () => {
    refused(
      await call("POST", "/configs", {
        endpoint: REMOTE_HTTP,
        eventTypes: ["cred.*"],
        auth: { bearer: { token: bearer } },
      }),
      "endpoint",
    );
    refused(
      await call("POST", "/configs", {
        endpoint: REMOTE_HTTP,
        eventTypes: ["cred.*"],
        auth: { headers: [{ name: "X-Api-Key", value: "k" }] },
      }),
      "http://",
    );
    // Without credentials plain http is fine; adding one is refused naming it.
    const plain = await create({ endpoint: REMOTE_HTTP });
    refused(
      await call("PATCH", `/configs/${plain.id}/auth`, { basic: { username: "u", password: "p" } }),
      "basic",
    );
    // A token URL over plain http would carry the client secret in clear (RFC 6749 section 2.3.1).
    const tls = await create({ endpoint: REMOTE_HTTPS });
    refused(
      await call("PATCH", `/configs/${tls.id}/auth`, {
        oauth2: { tokenUrl: "http://203.0.113.9/token", clientId: "c", clientSecret: "s" },
      }),
      "oauth2.tokenUrl",
    );
    // Moving an https config with credentials to plain http, even with them given again.
    const secured = await create({ endpoint: REMOTE_HTTPS, auth: { bearer: { token: bearer } } });
    refused(
      await call("PUT", `/configs/${secured.id}`, {
        endpoint: REMOTE_HTTP,
        eventTypes: ["cred.*"],
        auth: { bearer: { token: bearer } },
      }),
      "endpoint",
    );
    // Loopback over http is allowed while private addresses are (the default here).
    await create({ endpoint: home.url, auth: { bearer: { token: bearer } } });
    await create({ endpoint: "http://localhost:9/hook", auth: { bearer: { token: bearer } } });
    // A config stored before this rule (http, a credential) keeps working and can be edited
    // without touching the endpoint or the credential; giving a credential is refused.
    const old = await create({ endpoint: "https://203.0.113.10/hook", auth: { bearer: { token: bearer } } });
    await sql(env.api, "UPDATE configs SET endpoint = 'http://203.0.113.10/hook' WHERE id = $1", [old.id]);
    const edited = await call("PUT", `/configs/${old.id}`, {
      endpoint: "http://203.0.113.10/hook",
      eventTypes: ["cred.other"],
    });
    expect(edited.status, edited.text).to.equal(200);
    expect(edited.body.data.auth.bearer.token).to.equal("********");
    refused(await call("PATCH", `/configs/${old.id}/auth`, { bearer: { token: "another" } }), "bearer");
  });

  it("refuses credentials over http:// to loopback when private addresses are denied (the default)", async () => {
    // Without the opt-in every other test's process gets (test/support/process.ts).
    const strict = await startWebhooks({
      args: ["--audit-topic", ""],
      env: { EGRESS_ALLOW_PRIVATE: "false" },
    });
    try {
      const r = await strict.call("POST", "/configs", {
        endpoint: "http://localhost:9/hook",
        eventTypes: ["cred.*"],
        auth: { bearer: { token: bearer } },
      });
      refused(r, "endpoint");
      expect(r.body.errorMessage).to.contain("private ranges are denied unless --egress-allow-private");
      const tlsOk = await strict.call("POST", "/configs", {
        endpoint: "https://localhost:9/hook",
        eventTypes: ["cred.*"],
        auth: { bearer: { token: bearer } },
      });
      expect(tlsOk.status, tlsOk.text).to.equal(200);
    } finally {
      await strict.stop();
    }
  });

  describe("portal sessions", () => {
    let tenant: { id: string; uid: string };
    let endpointsOnly: string;
    let withSecrets: string;

    before(async () => {
      const t = await call("POST", "/tenants", { uid: `t-${hex(4)}`, name: "Tenant" });
      expect(t.status, t.text).to.be.oneOf([200, 201]);
      tenant = t.body.data;
      const session = async (features: string[]) => {
        const r = await call("POST", `/tenants/${tenant.id}/portal-sessions`, { features });
        expect(r.status, r.text).to.equal(201);
        return r.body.token as string;
      };
      endpointsOnly = await session(["endpoints"]);
      withSecrets = await session(["endpoints", "secrets"]);
    });

    it('keeps the signing secret on PUT /configs/{id} from a session without "secrets"; giving one is 403', async () => {
      const c = await create({ endpoint: home.url, tenantId: tenant.id });
      const before = await secretOf(c.id);
      const put = await call(
        "PUT",
        `/configs/${c.id}`,
        { endpoint: home.url, eventTypes: ["cred.kept"] },
        endpointsOnly,
      );
      expect(put.status, put.text).to.equal(200);
      expect(await secretOf(c.id)).to.equal(before);
      const given = await call(
        "PUT",
        `/configs/${c.id}`,
        { endpoint: home.url, eventTypes: ["cred.kept"], secret: Buffer.alloc(24, 7).toString("base64") },
        endpointsOnly,
      );
      expect(given.status, given.text).to.equal(403);
      expect(given.body.errorMessage).to.contain('"secrets"');
      expect(await secretOf(c.id)).to.equal(before);
      // A session with "secrets" (and every other caller) keeps the contract: a new secret when absent.
      const rotated = await call(
        "PUT",
        `/configs/${c.id}`,
        { endpoint: home.url, eventTypes: ["cred.*"] },
        withSecrets,
      );
      expect(rotated.status, rotated.text).to.equal(200);
      expect(await secretOf(c.id)).not.to.equal(before);
    });

    it("cannot move a config's credentials to its own server: the endpoint and the token URL stay bound", async () => {
      const c = await create({
        endpoint: home.url,
        tenantId: tenant.id,
        auth: { bearer: { token: bearer } },
      });
      refused(
        await call(
          "PUT",
          `/configs/${c.id}`,
          { endpoint: attacker.url, eventTypes: ["cred.*"] },
          endpointsOnly,
        ),
        "auth.bearer.token",
      );
      const o = await create({
        endpoint: home.url,
        tenantId: tenant.id,
        auth: { oauth2: { tokenUrl: `${origin(home.url)}/token`, clientId: "c1", clientSecret } },
      });
      refused(
        await call(
          "PATCH",
          `/configs/${o.id}/auth`,
          { oauth2: { tokenUrl: `${origin(attacker.url)}/token` } },
          endpointsOnly,
        ),
        "oauth2.clientSecret",
      );
      // An event of the tenant goes to the stored endpoint, with its token; the attacker gets nothing.
      await env.publish(env.event({ app: "cred", type: "MOVED", tenant: tenant.uid }));
      await eventually(
        "the delivery with the bearer token",
        async () => home.requests.some((r) => r.headers.authorization === `Bearer ${bearer}`),
        30_000,
      );
      expect(attacker.requests).to.have.length(0);
    });
  });
});
