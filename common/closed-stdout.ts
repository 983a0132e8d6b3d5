// A one-shot command whose output goes to a reader that stops early (`--help | head`,
// `schema | head -5`) keeps going quietly and exits with the code its work earned, as Unix
// tools do, instead of dying on an unhandled EPIPE with a stack trace.

const CLOSED = new Set(["EPIPE", "ERR_STREAM_DESTROYED"]);

export function ignoreClosedStdout(): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (!CLOSED.has(err.code ?? "")) throw err;
  });
}
