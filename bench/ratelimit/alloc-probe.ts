// Counts the bytes a Node process under bench allocates on V8's heap, so the bench can give
// allocation per call (load.ts loads it with `--import` into ours and the grpc-js floor).
// V8 has no running total, so the count is rebuilt from its collections: the heap's used
// size before each collection minus its size after the one before, plus what was allocated
// since the last one. On SIGUSR2 the process writes `<reading number> <total so far>` to
// <ALLOC_PROBE_DIR>/<pid> (alloc-count.ts reads it). Without ALLOC_PROBE_DIR it does nothing.

import { renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import v8 from "node:v8";

const dir = process.env.ALLOC_PROBE_DIR;

if (dir) {
  const profiler = new v8.GCProfiler();
  let total = 0;
  let readings = 0;
  /** The used heap size up to which `total` counts. */
  let counted = v8.getHeapStatistics().used_heap_size;
  const collect = () => {
    const { statistics } = profiler.stop();
    profiler.start();
    for (const gc of statistics) {
      total += gc.beforeGC.heapStatistics.usedHeapSize - counted;
      counted = gc.afterGC.heapStatistics.usedHeapSize;
    }
  };
  profiler.start();
  // The profiler keeps every collection's figures in native memory until stopped: a second's
  // worth at a time keeps that out of the RSS the bench measures.
  setInterval(collect, 1000).unref();
  process.on("SIGUSR2", () => {
    collect();
    const used = v8.getHeapStatistics().used_heap_size;
    total += used - counted;
    counted = used;
    const file = path.join(dir, String(process.pid));
    writeFileSync(`${file}.tmp`, `${++readings} ${total}`);
    renameSync(`${file}.tmp`, file);
  });
}
