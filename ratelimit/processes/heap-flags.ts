// V8 heap flags of the serving processes, chosen by the service so an operator need not.
// Node's default young generation (two 16 MB semi-spaces) fills completely under load and
// is most of a serving process's growth; 8 MB semi-spaces cut peak RSS at 5 000 calls/s
// from about 120 to about 105 MB per process at the same closed-loop throughput (measured
// in ratelimit/README.md, "Memory"). An operator's own choice, on the command line or in
// NODE_OPTIONS, is kept as given.

export const SERVING_SEMI_SPACE_MB = 8;

/** Node's arguments for a serving process: the primary's, plus the heap flag unless one was given. */
export function servingExecArgv(execArgv: string[], nodeOptions = process.env.NODE_OPTIONS ?? ""): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((a) =>
    /^--max[-_]semi[-_]space[-_]size\b/.test(a),
  );
  return given ? execArgv : [...execArgv, `--max-semi-space-size=${SERVING_SEMI_SPACE_MB}`];
}
