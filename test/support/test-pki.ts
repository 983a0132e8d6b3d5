import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

// A throwaway PKI made with the openssl CLI for TLS tests: a CA, a server certificate for
// 127.0.0.1/localhost, and client certificates (P-256 keys: fast to make).

export interface TestPki {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A second client key that matches no certificate here. */
  otherKey: string;
  /** A client certificate from another CA (the server does not trust it). */
  strangerCert: string;
  strangerKey: string;
}

export async function makeTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(path.join(tmpdir(), "etp-pki-"));
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const key = (name: string) =>
    ssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", `${name}.key`);
  const ca = (name: string) => {
    key(name);
    ssl(
      "req",
      "-x509",
      "-new",
      "-key",
      `${name}.key`,
      "-out",
      `${name}.crt`,
      "-days",
      "2",
      "-subj",
      `/CN=${name}`,
    );
  };
  const issue = async (name: string, by: string, ext: string) => {
    key(name);
    await writeFile(path.join(dir, `${name}.ext`), `${ext}\n`);
    ssl("req", "-new", "-key", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`);
    ssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${by}.crt`,
      "-CAkey",
      `${by}.key`,
      "-CAcreateserial",
      "-out",
      `${name}.crt`,
      "-days",
      "2",
      "-extfile",
      `${name}.ext`,
    );
  };
  try {
    ca("test-ca");
    ca("stranger-ca");
    await issue(
      "server",
      "test-ca",
      "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth",
    );
    await issue("client", "test-ca", "extendedKeyUsage=clientAuth");
    await issue("stranger", "stranger-ca", "extendedKeyUsage=clientAuth");
    key("other");
    const read = (f: string) => readFile(path.join(dir, f), "utf8");
    return {
      ca: await read("test-ca.crt"),
      serverCert: await read("server.crt"),
      serverKey: await read("server.key"),
      clientCert: await read("client.crt"),
      clientKey: await read("client.key"),
      otherKey: await read("other.key"),
      strangerCert: await read("stranger.crt"),
      strangerKey: await read("stranger.key"),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
