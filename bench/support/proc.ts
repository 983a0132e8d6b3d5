// One process and its children as Linux's /proc shows them: a service that runs as a
// primary with serving processes (node:cluster) is measured as the sum of all of them.

import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** The fields of /proc/PID/stat after the command name (which may contain spaces). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** The processes whose parent is `pid`. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(statFields(Number(entry))[1]) === pid) out.push(Number(entry));
    } catch {
      // the process ended while we read
    }
  }
  return out;
}

/** `pid` and its children. */
export function processFamily(pid: number): number[] {
  return [pid, ...childPids(pid)];
}

/** CPU seconds (user + system) used so far by `pids`; a process that ended counts nothing. */
export function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const f = statFields(pid);
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // ended
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** [current RSS, peak RSS] in MB, each summed over `pids`. */
export function rssMb(pids: number[]): [number, number] {
  let rss = 0;
  let peak = 0;
  for (const pid of pids) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
      rss += kb("VmRSS");
      peak += kb("VmHWM");
    } catch {
      // ended
    }
  }
  return [rss / 1024, peak / 1024];
}

/** The highest peak RSS (MB) of any one of `pids`. */
export function maxPeakRssMb(pids: number[]): number {
  return Math.max(0, ...pids.map((pid) => rssMb([pid])[1]));
}
