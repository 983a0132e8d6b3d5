// The Python receiver that verifies deliveries with the `standardwebhooks` package of PyPI
// (standard_webhooks_receiver.py beside this file), spawned from the venv that
// scripts/standardwebhooks-venv.sh makes.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fromRoot } from "../../common/paths.js";

/** The version scripts/standardwebhooks-venv.sh pins. */
export const PYTHON_LIBRARY_VERSION = "1.1.0";

const PYTHON = fromRoot(".tools", "standardwebhooks-venv", "bin", "python");
// Python source: read from the source tree, not dist/.
const SCRIPT = fromRoot("test", "support", "standard_webhooks_receiver.py");

/** One delivery as the Python receiver saw it, with the library's verdict. */
export interface PythonReceipt {
  path: string;
  headers: Record<string, string>;
  body: string;
  verified: boolean;
  error: string | null;
}

export class PythonReceiver {
  private child?: ChildProcess;
  url = "";

  async start(): Promise<this> {
    if (!existsSync(PYTHON))
      throw new Error(
        `the standardwebhooks ${PYTHON_LIBRARY_VERSION} venv is missing at ${PYTHON}: run \`bash scripts/standardwebhooks-venv.sh\` (npm test runs it through scripts/setup.sh)`,
      );
    const child = spawn(PYTHON, [SCRIPT], { stdio: ["pipe", "pipe", "inherit"] });
    this.child = child;
    const first = await new Promise<string>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.once("line", resolve);
      child.once("error", reject);
      child.once("exit", (code) =>
        reject(new Error(`the Python receiver exited (${code}) before it listened`)),
      );
    });
    this.url = `http://127.0.0.1:${(JSON.parse(first) as { port: number }).port}`;
    return this;
  }

  /** The secret the receiver verifies the deliveries to `path` with, as given. */
  async setSecret(path: string, secret: string): Promise<void> {
    const res = await fetch(`${this.url}/_secrets`, {
      method: "POST",
      body: JSON.stringify({ [path]: secret }),
    });
    if (res.status !== 204) throw new Error(`the Python receiver refused the secret: ${res.status}`);
  }

  async receipts(): Promise<PythonReceipt[]> {
    return (await (await fetch(`${this.url}/_log`)).json()) as PythonReceipt[];
  }

  /** POSTs a delivery as recorded (headers and body) to the receiver again: its answer. */
  async post(
    path: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<{ status: number; text: string }> {
    const { "content-length": _, host: __, ...kept } = headers;
    const res = await fetch(`${this.url}${path}`, { method: "POST", headers: kept, body });
    return { status: res.status, text: await res.text() };
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.stdin?.end();
    child.kill();
    await exited;
  }
}
