import { randomBytes, randomUUID } from "node:crypto";
import { PortalTokens } from "../../api/portal-token.js";
import { KeyRing } from "../../core/sealing.js";
import "../../test/support/test-key-file.js";
import { stopTestTemporal } from "../../test/support/temporal.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";

// bench/portal: what a portal session costs per API request. (1) CPU of verifying its
// token in-process (HS256, key derived once per ring key); (2) over HTTP, sequential
// GET /configs/{id} on one `serve` process, medians: no token (auth off) against a portal token
// (verification, the session's primary-key lookup, the feature table). Usage:
// node dist/bench/portal/run.js [requests per variant, default 2000]

const REQUESTS = Number(process.argv[2] ?? 2000);
const OPS = 20_000;

async function perOpMicros(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 500; i++) await fn(); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < OPS; i++) await fn();
  return Number(process.hrtime.bigint() - start) / 1000 / OPS;
}

async function main() {
  const tokens = new PortalTokens(new KeyRing([{ id: "k1", key: randomBytes(32) }]));
  const claims = {
    sessionId: randomUUID(),
    tenantId: randomUUID(),
    features: ["endpoints"],
    exp: 2_000_000_000,
  };
  const token = await tokens.sign(claims);
  const verifyMicros = await perOpMicros(() => tokens.verify(token));
  const signMicros = await perOpMicros(() => tokens.sign(claims));

  const api = await startWebhooks({ args: ["--audit-topic", ""] });
  try {
    const config = (
      await api.call("POST", "/configs", { endpoint: "https://hooks.example.com/x", eventTypes: ["a.b"] })
    ).body.data.id;
    const session = (await api.call("POST", "/tenants/uid:default/portal-sessions", {})).body.token;
    // Alternated request by request, so the machine's load drifts over both alike; medians.
    const once = async (headers: Record<string, string>) => {
      const start = process.hrtime.bigint();
      const r = await api.call("GET", `/configs/${config}`, undefined, headers);
      if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    const portal = { authorization: `Bearer ${session}` };
    for (let i = 0; i < 200; i++) await Promise.all([once({}), once(portal)]);
    const plain: number[] = [];
    const scoped: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      plain.push(await once({}));
      scoped.push(await once(portal));
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const plainMs = median(plain);
    const portalMs = median(scoped);
    console.log(
      JSON.stringify({
        verifyMicros: Number(verifyMicros.toFixed(1)),
        signMicros: Number(signMicros.toFixed(1)),
        requests: REQUESTS,
        noTokenMedianMs: Number(plainMs.toFixed(3)),
        portalTokenMedianMs: Number(portalMs.toFixed(3)),
        portalOverheadMs: Number((portalMs - plainMs).toFixed(3)),
      }),
    );
  } finally {
    await api.stop();
    await stopTestTemporal();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
