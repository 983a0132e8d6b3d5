import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { freePort } from "../support/ports.js";
import { runCommand } from "../support/process.js";
import { testTemporal } from "../support/temporal.js";
import { startWebhooks } from "../support/webhooks-server.js";

const PASSWORD = "pw-9f3c1d-SECRET";
const TOKEN = "tok-71b2aa-SECRET";
const JWKS_SECRET = "jwks-55e0-SECRET";

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => resolve(true)).once("error", () => resolve(false));
    socket.once("close", () => socket.destroy());
    setTimeout(() => socket.destroy(), 500).unref();
  });

/** A JetStream NATS server of the test's own that requires credentials. */
async function natsWithAuth(authArgs: string[]): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(tmpdir(), "etp-nats-auth-"));
  const child = spawn(
    "nats-server",
    ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", dir, ...authArgs],
    {
      stdio: "ignore",
    },
  );
  for (let i = 0; !(await accepts(port)); i++) {
    if (i > 100) throw new Error(`nats-server did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `127.0.0.1:${port}`, child };
}

/** NATS credentials from the URL and from flags; no secret in any log line, failed starts included. */
describe("NATS credentials, and no secret in the logs", function () {
  this.timeout(120_000);
  const servers: ChildProcess[] = [];
  after(() => {
    for (const s of servers) s.kill();
  });

  const serve = (args: string[]) =>
    startWebhooks({
      worker: true,
      args: ["--broker-topics", `cred-${Date.now()}`, "--nats-stream", `CRED_${Date.now()}`, ...args],
    });

  it("connects with user:password in the URL, and with --nats-user/--nats-password", async () => {
    const nats = await natsWithAuth(["--user", "hooks", "--pass", PASSWORD]);
    servers.push(nats.child);
    const fromUrl = await serve([
      "--nats-url",
      `nats://hooks:${PASSWORD}@${nats.url}`,
      "--auth-jwks-url",
      `http://reader:${JWKS_SECRET}@127.0.0.1:1/jwks.json`,
    ]);
    try {
      expect(fromUrl.process.output).to.include("connected to NATS");
      expect(fromUrl.process.output).not.to.include(PASSWORD);
      expect(fromUrl.process.output).not.to.include(JWKS_SECRET);
    } finally {
      await fromUrl.stop();
    }
    const fromFlags = await serve([
      "--nats-url",
      `nats://${nats.url}`,
      "--nats-user",
      "hooks",
      "--nats-password",
      PASSWORD,
    ]);
    try {
      expect(fromFlags.process.output).to.include("connected to NATS");
      expect(fromFlags.process.output).not.to.include(PASSWORD);
    } finally {
      await fromFlags.stop();
    }
  });

  it("connects with a token in the URL and with --nats-token", async () => {
    const nats = await natsWithAuth(["--auth", TOKEN]);
    servers.push(nats.child);
    for (const args of [
      ["--nats-url", `nats://${TOKEN}@${nats.url}`],
      ["--nats-url", `nats://${nats.url}`, "--nats-token", TOKEN],
    ]) {
      const api = await serve(args);
      try {
        expect(api.process.output).to.include("connected to NATS");
        expect(api.process.output).not.to.include(TOKEN);
      } finally {
        await api.stop();
      }
    }
  });

  it("fails a start with wrong credentials naming the server, without printing them", async () => {
    const nats = await natsWithAuth(["--user", "hooks", "--pass", PASSWORD]);
    servers.push(nats.child);
    const wrong = "wrong-3b7e-SECRET";
    const temporal = await testTemporal();
    const r = await runCommand("webhooks", [
      "worker",
      "--listen",
      `127.0.0.1:${await freePort()}`,
      "--temporal-address",
      temporal.address,
      "--storage-sqldb-conn-string",
      "postgresql://webhooks:webhooks@127.0.0.1:5432/webhooks",
      "--task-queues",
      "sends",
      "--nats-url",
      `nats://hooks:${wrong}@${nats.url}`,
    ]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(
      new RegExp(`cannot reach NATS at nats://${nats.url}: .*AUTHORIZATION_VIOLATION|Authorization`, "i"),
    );
    expect(r.stdout + r.stderr).not.to.include(wrong);
  });
});
