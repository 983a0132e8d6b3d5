// Every folder of test/ but webhooks (the main suite, .mocharc.cjs) and production (the
// production-server half): the rate limit service, the validator, the entity library, the
// release, the stack and the repository's own checks. One file at a time: `npm test` runs
// them beside the main suite, before the production-server half, in that half's port range
// (scripts/test.sh), which balances the two cores' queues.
const { selectTests } = require("./dist/test/support/test-groups.js");

module.exports = {
  spec: selectTests(__dirname, { exceptFolders: ["webhooks", "production"] }),
  timeout: 60000,
  "enable-source-maps": true,
  exit: true,
  require: ["dist/test/support/hooks.js"],
  reporter: "dist/test/support/duration-reporter.js",
  "reporter-option": ["output=test-output/test-durations-others.json"],
};
