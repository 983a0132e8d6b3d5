import { stopTestTemporal } from "./temporal.js";

// Mocha root hooks (loaded through .mocharc.json): shared servers stop after the run.
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopTestTemporal();
  },
};
