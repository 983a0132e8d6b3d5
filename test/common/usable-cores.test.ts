// usableCores: the CPU count capped by a cgroup CPU quota, read from fake cgroup trees.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { usableCores } from "../../common/usable-cores.js";

describe("usableCores", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), "cgroup-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** usableCores with this tree's cgroup files and /proc/self/cgroup at `self`. */
  const cores = (cpus: number, self = "self") => usableCores(root, path.join(root, self), cpus);
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  };

  it("cgroup v2: the smallest quota on the way up from the process's cgroup, rounded up", () => {
    write("cgroup.controllers", "cpu memory");
    write("self", "0::/kubepods/pod1/c1\n");
    write("cpu.max", "max 100000\n");
    write("kubepods/pod1/cpu.max", "250000 100000\n");
    write("kubepods/pod1/c1/cpu.max", "150000 100000\n");
    expect(cores(16)).to.equal(2);
    write("kubepods/pod1/c1/cpu.max", "max 100000\n");
    expect(cores(16)).to.equal(3);
  });

  it("cgroup v2 without a quota, and a quota above the CPU count: the CPU count", () => {
    write("cgroup.controllers", "cpu");
    write("self", "0::/\n");
    write("cpu.max", "max 100000\n");
    expect(cores(4)).to.equal(4);
    write("cpu.max", "800000 100000\n");
    expect(cores(4)).to.equal(4);
  });

  it("cgroup v1 (and the hybrid layout): the cpu controller's CFS quota, at its path or the mount's root", () => {
    write("self", "4:memory:/x\n2:cpu,cpuacct:/docker/abc\n0::/\n");
    write("cpu/cpu.cfs_quota_us", "50000\n");
    write("cpu/cpu.cfs_period_us", "100000\n");
    // A container sees its own cgroup at the mount's root: the listed path is absent.
    expect(cores(8)).to.equal(1);
    write("cpu/docker/abc/cpu.cfs_quota_us", "300000\n");
    write("cpu/docker/abc/cpu.cfs_period_us", "100000\n");
    expect(cores(8)).to.equal(3);
    write("cpu/docker/abc/cpu.cfs_quota_us", "-1\n");
    expect(cores(8)).to.equal(8);
  });

  it("no cgroup information at all: the CPU count, never below 1", () => {
    expect(cores(6, "missing")).to.equal(6);
    expect(cores(0, "missing")).to.equal(1);
  });
});
