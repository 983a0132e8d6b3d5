import { expect } from "chai";
import { runCommand } from "../support/process.js";

/** The consumer portal's flags: a bad value stops `serve` before anything starts, naming the flag. */
describe("consumer portal flags", function () {
  this.timeout(60_000);

  for (const [flag, value, words] of [
    ["--portal-frame-ancestors", "'self'; script-src *", "CSP sources"],
    ["--portal-frame-ancestors", "https://a.example.com,https://b.example.com", "CSP sources"],
    ["--portal-frame-ancestors", " ", "CSP sources"],
    ["--portal-logo-hosts", "https://cdn.example.com", "not a host name"],
    ["--portal-logo-hosts", "cdn..example.com", "not a host name"],
    ["--portal-base-url", "hooks.example.com", "absolute URL"],
    ["--portal-base-url", "javascript:alert(1)", "http or https"],
    ["--portal-base-url", "https://hooks.example.com/?x=1", "no query"],
  ]) {
    it(`rejects ${flag} ${JSON.stringify(value)} naming the flag`, async () => {
      const r = await runCommand("webhooks", ["serve", flag!, value!]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.include(flag);
      expect(r.stderr).to.include(words);
    });
  }

  it("reads PORTAL_FRAME_ANCESTORS like the flag", async () => {
    const r = await runCommand("webhooks", ["serve"], { PORTAL_FRAME_ANCESTORS: "'none'; x" });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include("--portal-frame-ancestors");
  });

  it("lists the portal flags in --help", async () => {
    const help = (await runCommand("webhooks", ["serve", "--help"])).stdout;
    for (const flag of [
      "--portal-frame-ancestors",
      "--portal-logo-hosts",
      "--portal-base-url",
      "--portal-assets-dir",
    ])
      expect(help).to.include(flag);
  });
});
