import { killTestDevServerNow, stopTestTemporal } from "./temporal.js";

// Mocha root hooks (loaded by .mocharc.cjs, .mocharc.temporal-server.cjs and npm run test:one):
// shared servers stop after the run. The fast loop (.mocharc.fast.cjs) starts none and loads none.
// In a --parallel worker (mocha sets MOCHA_WORKER_ID) root hooks run around every file, so
// the worker keeps its dev server for all the files it runs and kills it when it exits.
const parallelWorker = process.env.MOCHA_WORKER_ID !== undefined;
if (parallelWorker) process.once("exit", killTestDevServerNow);

export const mochaHooks = parallelWorker
  ? {}
  : {
      async afterAll(this: Mocha.Context) {
        this.timeout(30_000);
        await stopTestTemporal();
      },
    };
