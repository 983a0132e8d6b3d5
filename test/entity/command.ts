import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
// A writable config alias seals secrets: the command inherits the tests' key (SECRETS_KEY_FILE).
import "../support/test-key-file.js";

// The compiled `entity-server` command, run as a child process.

const CLI = fileURLToPath(new URL("../../cmd/entity-server.js", import.meta.url));

export interface Running {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  exit: Promise<number | null>;
}

export function runToExit(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, DATABASE_URL: "", ...env },
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("exit", (code) => resolve({ code, out }));
  });
}

/** Starts the command on a free port and waits for its "listening" log line. */
export function start(args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [CLI, "--listen", "127.0.0.1:0", ...args], {
    env: { ...process.env, DATABASE_URL: "" },
  });
  let out = "";
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`entity-server did not start:\n${out}`)), 30_000);
    child.stderr.on("data", (d) => (out += d));
    child.stdout.on("data", (d) => {
      out += d;
      const m = /"listen":"[^"]*:(\d+)".*"entity server listening"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, baseUrl: `http://127.0.0.1:${m[1]}`, output: () => out, exit });
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`entity-server exited with ${code}:\n${out}`));
    });
  });
}

export async function stop(r: Running | undefined): Promise<number | null> {
  if (!r) return null;
  r.child.kill("SIGTERM");
  return r.exit;
}
