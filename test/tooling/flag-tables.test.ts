// The flag tables of docs/webhooks/flags.md are generated from the commands' own --help
// (scripts/flag-tables.ts); this fails when a flag, default, environment variable or
// description in cmd/webhooks.ts changed and the page was not regenerated.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { committedBlock, FLAGS_PAGE, generateFlagTables, parseOptions } from "../../scripts/flag-tables.js";

describe("flag tables of the manual", function () {
  this.timeout(60_000);

  it("reads commander's help: wrapped descriptions, its own and commander's defaults, choices, env", () => {
    const help = [
      "Usage: webhooks serve [options]",
      "",
      "Options:",
      '  --log-level <level>  log level (choices: "trace", "info", default: "info", env: LOG_LEVEL)',
      "  --conn <url>         connection string (default: embedded database) (env:",
      "                       DATABASE_URL)",
      "  --max <n>            cap (at most 1000) (default: 15)",
      '  --tls [on]           TLS (default: false, preset: "true")',
      "  -h, --help           display help for command",
      "",
      "Commands:",
      "  rekey [options]      not an option",
    ].join("\n");
    expect(parseOptions(help)).to.deep.equal([
      {
        flags: "--log-level <level>",
        description: "log level",
        choices: ["trace", "info"],
        defaultValue: "info",
        env: "LOG_LEVEL",
      },
      {
        flags: "--conn <url>",
        description: "connection string",
        defaultValue: "embedded database",
        env: "DATABASE_URL",
      },
      { flags: "--max <n>", description: "cap (at most 1000)", defaultValue: "15" },
      { flags: "--tls [on]", description: "TLS", defaultValue: "false" },
    ]);
  });

  it(`${FLAGS_PAGE} holds the tables the commands generate`, async () => {
    const committed = committedBlock(readFileSync(fromRoot(FLAGS_PAGE), "utf8"));
    const generated = await generateFlagTables();
    expect(generated).to.contain("| `--retry-period <duration>` | `3s` |");
    expect(committed, `regenerate with: npm run build && node dist/scripts/flag-tables.js --write`).to.equal(
      generated,
    );
  });
});
