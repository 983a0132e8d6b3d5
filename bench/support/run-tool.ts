// Runs a load generator or other tool to its end and collects what it printed.

import { spawn } from "node:child_process";

export interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cmd` with `args`; rejects only when it cannot be started. */
export function runTool(cmd: string, args: string[]): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
