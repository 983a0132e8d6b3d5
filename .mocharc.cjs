// The main suite (`npx mocha`, called by `npm test`): every test file but test/production
// and those tagged @temporal-server-only (they run in the production-server half only),
// two files at a time (three measured faster but failed a test in each of four runs: the
// machine at its limit). Each worker keeps its own Temporal dev server and its own share
// of the test ports (test/support/hooks.ts, test/support/ports.ts). Files start in the
// order of test/support/test-groups.ts `parallelOrder`: those tagged @long first.
const { parallelOrder, TEMPORAL_SERVER_ONLY } = require("./dist/test/support/test-groups.js");

module.exports = {
  spec: parallelOrder(__dirname, { folders: ["production"], tags: [TEMPORAL_SERVER_ONLY] }),
  timeout: 60000,
  "enable-source-maps": true,
  exit: true,
  parallel: true,
  jobs: 2,
  require: ["dist/test/support/hooks.js"],
  reporter: "dist/test/support/duration-reporter.js",
  "reporter-option": ["output=test-output/test-durations.json"],
};
