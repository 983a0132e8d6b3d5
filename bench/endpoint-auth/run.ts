import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { sendWithEndpointAuth } from "../../activities/endpoint-auth-send.js";
import { OAuthTokens } from "../../activities/oauth-tokens.js";
import { ConfigSecrets } from "../../core/config-secrets.js";
import {
  authContext,
  type EndpointAuth,
  openStoredAuth,
  type StoredAuth,
} from "../../core/endpoint-auth-rows.js";
import { KeyRing } from "../../core/sealing.js";
import { makeTestPki } from "../../test/support/test-pki.js";

// bench/endpoint-auth: what each kind of endpoint auth adds to one send, against local
// receivers (HTTP, and HTTPS for mutual TLS): the send's wall time and this process's CPU
// per send, sequential, after a warm-up; plus the CPU of opening the sealed credentials.
// Usage: node dist/bench/endpoint-auth/run.js [sends per kind, default 2000]

const SENDS = Number(process.argv[2] ?? 2000);

const listen = async (server: http.Server) => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return (server.address() as AddressInfo).port;
};

async function main() {
  const pki = await makeTestPki();
  const answer = (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    req.on("end", () => {
      if (req.url === "/token") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            access_token: randomBytes(16).toString("hex"),
            token_type: "Bearer",
            expires_in: 3600,
          }),
        );
      } else res.writeHead(200).end("ok");
    });
  };
  const plain = http.createServer(answer);
  const base = `http://127.0.0.1:${await listen(plain)}`;
  const tls = https.createServer(
    { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
    answer,
  );
  const tlsBase = `https://127.0.0.1:${await listen(tls)}`;
  const oneWay = https.createServer({ key: pki.serverKey, cert: pki.serverCert }, answer);
  const oneWayBase = `https://127.0.0.1:${await listen(oneWay)}`;
  const tokens = new OAuthTokens(undefined);
  const body = JSON.stringify({ type: "bench", payload: { n: 1 } });
  const kinds: [string, string, EndpointAuth | null][] = [
    ["none", base, null],
    [
      "headers (3)",
      base,
      {
        headers: [
          ["x-a", "1"],
          ["x-b", "2"],
          ["x-api-key", randomBytes(16).toString("hex")],
        ],
      },
    ],
    ["basic", base, { headers: [], basic: { username: "u", password: "p".repeat(24) } }],
    ["bearer", base, { headers: [], bearer: randomBytes(24).toString("hex") }],
    [
      "oauth2 (cached token)",
      base,
      { headers: [], oauth2: { tokenUrl: `${base}/token`, clientId: "c", clientSecret: "s" } },
    ],
    [
      "mutual TLS",
      tlsBase,
      { headers: [], tls: { certificate: pki.clientCert, privateKey: pki.clientKey, caBundle: pki.ca } },
    ],
  ];
  const sender = (name: string, endpoint: string, auth: EndpointAuth | null, tlsOnly?: string) => () =>
    sendWithEndpointAuth(
      {
        endpoint: `${endpoint}/hook`,
        webhookId: randomUUID(),
        body,
        secrets: [randomBytes(24).toString("base64")],
        idempotencyKey: "k",
        test: false,
        timeoutMs: 10_000,
        ...(tlsOnly ? { tls: { ca: tlsOnly } } : {}),
      },
      auth,
      name,
      tokens,
    );
  const runs = [
    ...kinds.map(([name, endpoint, auth]) => ({
      name,
      send: sender(name, endpoint, auth),
      wall: 0,
      cpu: 0,
      failed: 0,
    })),
    {
      name: "https, no client cert",
      send: sender("https", oneWayBase, null, pki.ca),
      wall: 0,
      cpu: 0,
      failed: 0,
    },
  ];
  for (const r of runs) for (let i = 0; i < 500; i++) await r.send();
  // Rounds alternate the kinds, so a slower minute of the shared machine hits them alike.
  const ROUNDS = 5;
  for (let round = 0; round < ROUNDS; round++)
    for (const r of runs) {
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      for (let i = 0; i < SENDS / ROUNDS; i++) if ((await r.send()).statusCode !== 200) r.failed++;
      r.wall += Number(process.hrtime.bigint() - start) / 1000;
      const used = process.cpuUsage(cpu);
      r.cpu += used.user + used.system;
    }
  console.log(
    `${SENDS} sequential sends per kind in ${ROUNDS} alternated rounds, local receivers in this process`,
  );
  for (const r of runs)
    console.log(
      `${r.name.padEnd(24)} ${(r.wall / SENDS).toFixed(0).padStart(6)} µs/send wall  ${(r.cpu / SENDS).toFixed(0).padStart(6)} µs/send CPU (client and receiver)${r.failed ? `  ${r.failed} failed` : ""}`,
    );
  console.log(`token requests: ${tokens.fetches}`);

  // Opening every credential kind of one stored row, as the send activity does per send.
  const secrets = new ConfigSecrets(new KeyRing([{ id: "k1", key: randomBytes(32) }]));
  const id = randomUUID();
  const seal = (c: Parameters<typeof authContext>[1], v: string) => secrets.sealIn(authContext(id, c), v);
  const row: StoredAuth = {
    header_names: ["x-a", "x-b"],
    header_values: seal("header_values", JSON.stringify(["1", "2"])),
    basic_username: null,
    basic_password: null,
    bearer_token: seal("bearer_token", "t".repeat(32)),
    oauth_token_url: null,
    oauth_client_id: null,
    oauth_client_secret: null,
    oauth_scope: null,
    oauth_audience: null,
    tls_certificate: pki.clientCert,
    tls_private_key: seal("tls_private_key", pki.clientKey),
    tls_ca_bundle: pki.ca,
    destination_secret: null,
  };
  for (let i = 0; i < 2000; i++) openStoredAuth(secrets, id, row);
  const start = process.hrtime.bigint();
  for (let i = 0; i < 50_000; i++) openStoredAuth(secrets, id, row);
  console.log(
    `opening a row with headers, a bearer token and a TLS key: ${(Number(process.hrtime.bigint() - start) / 1000 / 50_000).toFixed(1)} µs`,
  );

  plain.close();
  tls.close();
  oneWay.close();
  process.exit(0);
}

void main();
