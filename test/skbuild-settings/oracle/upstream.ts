// scikit-build-core's own settings reader, run as the oracle: one Python process per release
// reads a whole batch of documents (read_settings.py beside this file) and answers in order.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The releases the differential test and the benchmark compare with (scripts/skbuild-oracle.sh pins them). */
export const ORACLE_RELEASES = ["0.12.2", "1.1.2"] as const;
export type OracleRelease = (typeof ORACLE_RELEASES)[number];

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "../../../..");
// The driver is Python source: read it from the source tree, not dist/.
const DRIVER = path.join(ROOT, "test/skbuild-settings/oracle/read_settings.py");

export interface OracleRequest {
  id: string;
  /** The pyproject.toml bytes. */
  toml: Uint8Array;
  state: string;
  env: Record<string, string>;
  retry: boolean;
  fromSdist: boolean;
  systemCmake: string[];
}

export interface OracleFacts {
  backend_version: string;
  python_version: string;
  implementation_name: string;
  implementation_version: string;
  platform_system: string;
  platform_machine: string;
  platform_node: string;
  abi_flags: string;
  cmake_wheel: boolean;
}

export type OracleAnswer =
  | { id: string; ok: true; settings: Record<string, unknown> }
  | { id: string; ok: false; error: string; unrecognized: string[] };

/** The interpreter of a release's virtual environment; a clear error when setup has not made it. */
export function oraclePython(release: string): string {
  const python = path.join(ROOT, ".tools", `skbuild-venv-${release}`, "bin", "python");
  if (!existsSync(python))
    throw new Error(
      `scikit-build-core ${release} is not installed at ${python}: run \`bash scripts/skbuild-oracle.sh\` (npm test runs it through scripts/setup.sh)`,
    );
  return python;
}

/** Runs the driver on a batch of requests; resolves with its output lines. */
async function runDriver(
  release: string,
  requests: readonly OracleRequest[],
  args: string[],
): Promise<unknown[]> {
  const child = spawn(oraclePython(release), [DRIVER, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const done = new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve(code ?? -1));
  });
  for (const r of requests) {
    const line = {
      id: r.id,
      toml_b64: Buffer.from(r.toml).toString("base64"),
      state: r.state,
      env: r.env,
      retry: r.retry,
      from_sdist: r.fromSdist,
      system_cmake: r.systemCmake,
    };
    child.stdin.write(`${JSON.stringify(line)}\n`);
  }
  child.stdin.end();
  const code = await done;
  if (code !== 0)
    throw new Error(`scikit-build-core ${release} driver exited ${code}: ${stderr.slice(-2000)}`);
  return stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

/** Reads every request with the release's SettingsReader in one process. */
export async function readWithUpstream(
  release: string,
  requests: readonly OracleRequest[],
): Promise<{ facts: OracleFacts; answers: OracleAnswer[] }> {
  const lines = (await runDriver(release, requests, [])) as Record<string, unknown>[];
  const facts = lines.shift()?.facts as OracleFacts | undefined;
  if (!facts || lines.length !== requests.length)
    throw new Error(
      `scikit-build-core ${release} driver answered ${lines.length} of ${requests.length} documents`,
    );
  return { facts, answers: lines as unknown as OracleAnswer[] };
}

/** Seconds the release's reader takes for the whole batch, per round (after one warm-up pass). */
export async function timeUpstream(
  release: string,
  requests: readonly OracleRequest[],
  rounds: number,
): Promise<number[]> {
  const lines = (await runDriver(release, requests, ["--rounds", String(rounds)])) as Record<
    string,
    unknown
  >[];
  const seconds = lines[1]?.round_seconds;
  if (!Array.isArray(seconds)) throw new Error(`scikit-build-core ${release} driver gave no timings`);
  return seconds as number[];
}
