import { stopTestTemporal } from "./temporal.js";

// Mocha root hooks (loaded by .mocharc.json, .mocharc.temporal-server.cjs and npm run test:one):
// shared servers stop after the run. The fast loop (.mocharc.fast.cjs) starts none and loads none.
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopTestTemporal();
  },
};
