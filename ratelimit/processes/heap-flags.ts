// V8 heap flags of the serving processes, chosen by the service so an operator need not.
// Node's default young generation (two 16 MB semi-spaces) fills under load; with 8 MB
// semi-spaces a serving process peaked at 122 MB instead of 135 MB at exactly 5 000 calls/s,
// at the same closed-loop throughput (ratelimit/README.md, "Against the Go reference").
// An operator's own choice, on the command line or in NODE_OPTIONS, is kept as given.

export const SERVING_SEMI_SPACE_MB = 8;

/** Node's arguments for a serving process: the primary's, plus the heap flag unless one was given. */
export function servingExecArgv(execArgv: string[], nodeOptions = process.env.NODE_OPTIONS ?? ""): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((a) =>
    /^--max[-_]semi[-_]space[-_]size\b/.test(a),
  );
  return given ? execArgv : [...execArgv, `--max-semi-space-size=${SERVING_SEMI_SPACE_MB}`];
}
