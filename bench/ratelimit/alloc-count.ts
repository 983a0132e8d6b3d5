// The bench's side of alloc-probe.ts: the node arguments that load the probe into a process
// under test, and the bytes allocated so far by a set of those processes.

import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Node arguments and environment that make a process (and its node:cluster children) count into `dir`. */
export function allocProbe(dir: string): { nodeArgs: string[]; env: Record<string, string> } {
  return {
    nodeArgs: [`--import=${fileURLToPath(new URL("./alloc-probe.js", import.meta.url))}`],
    env: { ALLOC_PROBE_DIR: dir },
  };
}

function reading(dir: string, pid: number): [number, number] {
  try {
    const [n, total] = readFileSync(path.join(dir, String(pid)), "utf8").split(" ");
    return [Number(n), Number(total)];
  } catch {
    return [0, 0];
  }
}

/**
 * Bytes allocated so far by `pids` together (processes started with `allocProbe(dir)`: the
 * signal would end any other), or NaN when one of them does not answer.
 */
export async function allocatedBytes(dir: string, pids: number[]): Promise<number> {
  const before = pids.map((pid) => reading(dir, pid)[0]);
  for (const pid of pids) process.kill(pid, "SIGUSR2");
  let sum = 0;
  for (let i = 0; i < pids.length; i++) {
    const deadline = Date.now() + 3000;
    let r = reading(dir, pids[i]!);
    while (r[0] <= before[i]! && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      r = reading(dir, pids[i]!);
    }
    if (r[0] <= before[i]!) return Number.NaN;
    sum += r[1];
  }
  return sum;
}
