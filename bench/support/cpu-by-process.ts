import { readdirSync, readFileSync } from "node:fs";

// CPU time used by the processes of this machine, grouped by a label, read from
// /proc: what each component costs per operation does not depend on what else
// runs on a noisy machine, unlike throughput.

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** Milliseconds of CPU (user + system) per process id. */
function cpuMsByPid(): Map<number, { comm: string; ms: number }> {
  const out = new Map<number, { comm: string; ms: number }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // comm is in parentheses and may contain spaces: fields follow the last ")".
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const fields = stat.slice(close + 2).split(" ");
      const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
      out.set(Number(entry), { comm, ms: (ticks * 1000) / TICKS_PER_SECOND });
    } catch {
      // the process ended while we read
    }
  }
  return out;
}

/**
 * Samples CPU per labelled group: `label(pid, comm)` names the group a process
 * belongs to, or undefined to ignore it. `delta()` is the CPU ms each group
 * used since `start()`.
 */
export class CpuMeter {
  private before = new Map<number, { comm: string; ms: number }>();
  constructor(private readonly label: (pid: number, comm: string) => string | undefined) {}

  start(): void {
    this.before = cpuMsByPid();
  }

  delta(): Record<string, number> {
    const groups: Record<string, number> = {};
    for (const [pid, now] of cpuMsByPid()) {
      const name = this.label(pid, now.comm);
      if (!name) continue;
      const prev = this.before.get(pid);
      const used = prev && prev.comm === now.comm ? now.ms - prev.ms : now.ms;
      groups[name] = (groups[name] ?? 0) + used;
    }
    return groups;
  }
}
