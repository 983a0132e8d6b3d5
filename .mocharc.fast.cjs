// `npm run test:fast`: every test file that needs no running service, as
// test/support/test-groups.ts reads it from the sources (tags and imports, no path list).
// Two files at a time, one per core; no root hooks: nothing here starts a service to stop.
const { selectTests } = require("./dist/test/support/test-groups.js");

module.exports = {
  spec: selectTests(__dirname, { serviceFree: true }),
  timeout: 60000,
  "enable-source-maps": true,
  exit: true,
  parallel: true,
  jobs: 2,
  reporter: "dist/test/support/duration-reporter.js",
  "reporter-option": ["output=test-output/test-durations-fast.json"],
};
