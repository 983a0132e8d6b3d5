// How many cores this process may really use: the CPUs it is allowed to run on
// (os.availableParallelism, which honours taskset and cpusets) capped by the cgroup's CPU
// quota, which Node 20's libuv does not read. A container given `--cpus=1` on a 16-core
// host sees 16 CPUs but gets one core's time: sizing a process pool by the CPU count there
// would only add processes that wait for each other.

import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Cores allowed by the CPU quotas of the cgroup at `cgroupPath` under `root` and of its ancestors (Infinity: none). */
function cgroupV2Quota(root: string, cgroupPath: string): number {
  let quota = Number.POSITIVE_INFINITY;
  for (let dir = path.join(root, cgroupPath); dir.startsWith(root); dir = path.dirname(dir)) {
    const max = read(path.join(dir, "cpu.max"))?.split(/\s+/);
    if (max && max[0] !== "max") quota = Math.min(quota, Number(max[0]) / Number(max[1]));
    if (dir === root) break;
  }
  return quota;
}

/** Cores allowed by cgroup v1's CFS quota of the `cpu` controller at `cgroupPath` (Infinity: none). */
function cgroupV1Quota(root: string, cgroupPath: string): number {
  // Inside a container the listed path may not exist: its own cgroup is mounted as the root.
  for (const dir of [path.join(root, "cpu", cgroupPath), path.join(root, "cpu")]) {
    const quota = Number(read(path.join(dir, "cpu.cfs_quota_us")));
    const period = Number(read(path.join(dir, "cpu.cfs_period_us")));
    if (period > 0) return quota > 0 ? quota / period : Number.POSITIVE_INFINITY;
  }
  return Number.POSITIVE_INFINITY;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return undefined;
  }
}

/**
 * The number of cores to size a process pool by: at least 1. `root` and `self` are the
 * cgroup file system and /proc/self/cgroup (parameters for tests).
 */
export function usableCores(
  root = "/sys/fs/cgroup",
  self = "/proc/self/cgroup",
  cpus = os.availableParallelism(),
): number {
  const lines = read(self) ?? "";
  // cgroup v2 alone (cgroup.controllers at the root): its "0::/path" line. Otherwise v1 (or
  // the hybrid layout, whose v2 part has no CPU controller): the line listing `cpu`.
  const quota =
    read(path.join(root, "cgroup.controllers")) !== undefined
      ? cgroupV2Quota(root, /^0::(.*)$/m.exec(lines)?.[1] ?? "/")
      : cgroupV1Quota(root, /^\d+:(?:[^:]*,)?cpu(?:,[^:]*)?:(.*)$/m.exec(lines)?.[1] ?? "/");
  // A quota of 1.5 cores still lets two processes make progress at once.
  return Math.max(1, Math.min(cpus, Math.ceil(quota)));
}
