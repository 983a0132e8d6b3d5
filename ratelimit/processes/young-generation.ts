// The young-generation bound of a process that serves by itself. The serving processes of a
// primary get --max-semi-space-size on their command line (heap-flags.ts), but a process
// already running cannot: V8 sizes the young generation's limit once, at start. It can stop
// the young generation from growing past the same size, because V8 reads
// --semi-space-growth-factor each time it grows the new space: after each scavenge the
// factor is set to 1 once the new space has reached two semi-spaces of the bound (it then
// stays there), and back to 2 below that (after V8 shrank it while idle).

import { constants, PerformanceObserver } from "node:perf_hooks";
import v8 from "node:v8";

/** The new space's current size in bytes (both semi-spaces). */
export function newSpaceBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? 0;
}

/** Holds the new space at or below two semi-spaces of `semiSpaceMb`; answers the function that stops it. */
export function holdYoungGeneration(semiSpaceMb: number): () => void {
  const bound = 2 * semiSpaceMb * 1024 * 1024;
  let factor = 0;
  const check = () => {
    const wanted = newSpaceBytes() >= bound ? 1 : 2;
    if (wanted === factor) return;
    v8.setFlagsFromString(`--semi-space-growth-factor=${wanted}`);
    factor = wanted;
  };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const detail = (entry as { detail?: { kind?: number } }).detail;
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        check();
        return;
      }
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  check();
  return () => {
    observer.disconnect();
    v8.setFlagsFromString("--semi-space-growth-factor=2");
  };
}
