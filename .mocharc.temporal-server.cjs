// `npm run test:temporal-server` (with TEST_TEMPORAL=server): the tests run on the
// production Temporal server, chosen by folder and tag (test/support/test-groups.ts): all
// of test/production, and every file with a line `// tags: @temporal-server` (also run
// in the main suite) or `// tags: @temporal-server-only` (run here only).
const { selectTests, TEMPORAL_SERVER, TEMPORAL_SERVER_ONLY } = require("./dist/test/support/test-groups.js");

module.exports = {
  spec: selectTests(__dirname, { folders: ["production"], tags: [TEMPORAL_SERVER, TEMPORAL_SERVER_ONLY] }),
  timeout: 60000,
  "enable-source-maps": true,
  exit: true,
  require: ["dist/test/support/hooks.js"],
  reporter: "dist/test/support/duration-reporter.js",
  "reporter-option": ["output=test-output/test-durations-temporal-server.json"],
};
