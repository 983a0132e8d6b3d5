// V8 heap flags of the serving processes, chosen by the service so an operator need not.
// Under load most of a serving process's memory is garbage: the young generation, and
// old-generation garbage waiting for a mark-compact (grpc-js on node:http2 leaves a few KB
// per call there, with native memory of its streams that is freed only with it). V8's own
// sizing lets the old generation grow to several times what survives before collecting it.
// Two flags bound both: semi-spaces of 4 MB (Node's: 16 MB), and an old generation that may
// grow by 70 % over what survived the last mark-compact
// (docs/performance/ratelimit.md#memory-of-a-serving-process). An operator's own value of either, on node's command line or in
// NODE_OPTIONS, is kept as given.
// The serving processes of a primary get both on their command line. A process that serves
// by itself sets the old-generation flag when it starts (V8 reads it at every mark-compact)
// and, unless started with a young-generation size, holds its young generation to the same
// bound by stopping its growth there (young-generation.ts: V8 sizes its limit once, at start).

export const SERVING_SEMI_SPACE_MB = 4;
export const SERVING_HEAP_GROWING_PERCENT = 70;

const FLAGS = [
  ["max-semi-space-size", SERVING_SEMI_SPACE_MB],
  ["heap-growing-percent", SERVING_HEAP_GROWING_PERCENT],
] as const;

/** True when `args` set the V8 flag `name` (dashes or underscores). */
function given(name: string, args: string[]): boolean {
  const flag = new RegExp(`^--${name.replace(/-/g, "[-_]")}\\b`);
  return args.some((a) => flag.test(a));
}

/** Node's arguments for a serving process: the primary's, plus each heap flag not given. */
export function servingExecArgv(execArgv: string[], nodeOptions = process.env.NODE_OPTIONS ?? ""): string[] {
  const args = [...execArgv, ...nodeOptions.split(/\s+/)];
  const added = FLAGS.filter(([name]) => !given(name, args)).map(([name, value]) => `--${name}=${value}`);
  return [...execArgv, ...added];
}

/** The heap flags a process serving by itself sets on itself at start (with v8.setFlagsFromString). */
export function ownHeapFlags(execArgv = process.execArgv): string[] {
  const name = "heap-growing-percent";
  return given(name, execArgv) ? [] : [`--${name}=${SERVING_HEAP_GROWING_PERCENT}`];
}

/** True when a process serving by itself must hold its own young generation (started without a size for it). */
export function holdsOwnYoungGeneration(
  execArgv = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? "",
): boolean {
  return !given("max-semi-space-size", [...execArgv, ...nodeOptions.split(/\s+/)]);
}
