import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
// Before any command starts: the key ring every webhooks process inherits.
import "./test-key-file.js";

// The tests' receivers listen on loopback: their webhooks processes opt in to private
// destinations, as `npm start` does (a test of the default passes EGRESS_ALLOW_PRIVATE=false).
process.env.EGRESS_ALLOW_PRIVATE ??= "true";

/** The processes whose parent is `pid` (e.g. the API processes of a cluster primary). */
export { childPids } from "../../bench/support/proc.js";

/** The compiled command `name` next to this compiled test support file (dist/cmd/<name>.js). */
export const commandPath = (name: string): string =>
  fileURLToPath(new URL(`../../cmd/${name}.js`, import.meta.url));

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** An executable file of another tree (e.g. a release's bin/), run in its `cwd`. */
export interface Executable {
  file: string;
  cwd: string;
}

/**
 * `name` is a compiled command of this tree (dist/cmd/<name>.js, run by this node, with
 * `nodeArgs`), or an executable of another tree.
 */
function spawnCommand(
  name: string | Executable,
  args: string[],
  env: Record<string, string>,
  nodeArgs: string[] = [],
): ChildProcess {
  const options = { env: { ...process.env, ...env } };
  return typeof name === "string"
    ? spawn(process.execPath, [...nodeArgs, commandPath(name), ...args], options)
    : spawn(name.file, args, { ...options, cwd: name.cwd });
}

/** Runs a command to completion. */
export function runCommand(
  name: string | Executable,
  args: string[],
  env: Record<string, string> = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCommand(name, args, env);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A long-running command under test, with its output kept for assertions and failure messages. */
export class ServiceProcess {
  readonly child: ChildProcess;
  output = "";

  constructor(
    name: string | Executable,
    args: string[],
    env: Record<string, string> = {},
    nodeArgs: string[] = [],
  ) {
    this.child = spawnCommand(name, args, env, nodeArgs);
    this.child.stdout?.on("data", (d) => {
      this.output += d;
    });
    this.child.stderr?.on("data", (d) => {
      this.output += d;
    });
  }

  /** Resolves when `url` answers 200; fails early if the process exits. */
  async waitHealthy(url: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // The last answer goes in the failure: which check failed, and how.
    let last = "no answer yet";
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) {
        throw new Error(
          `process exited with ${this.child.exitCode} before ${url} was healthy:\n${this.output}`,
        );
      }
      const ok = await fetch(url)
        .then(async (r) => {
          last = `${r.status} ${await r.text()}`;
          return r.ok;
        })
        .catch((err: Error) => {
          last = `${err.message}${err.cause ? `: ${(err.cause as Error).message}` : ""}`;
          return false;
        });
      if (ok) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`${url} not healthy within ${timeoutMs} ms (last answer: ${last}):\n${this.output}`);
  }

  /** Resolves once the process printed `text` (its output arrives asynchronously). */
  async waitForOutput(text: string | RegExp, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const found = () => (typeof text === "string" ? this.output.includes(text) : text.test(this.output));
    while (!found()) {
      if (Date.now() > deadline) throw new Error(`output never contained ${text}:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null)
      return Promise.resolve(this.child.exitCode);
    return new Promise((resolve) => {
      this.child.once("exit", (code) => resolve(code));
      this.child.kill(signal);
    });
  }
}
