import { readFileSync } from "node:fs";
import { expect } from "chai";
import { parse } from "yaml";
import { fromRoot } from "../../common/paths.js";
import { devServerArgs } from "../../common/temporal-dev-server.js";
import { searchAttributeCliArgs } from "../../workflows/search-attributes.js";

interface Compose {
  services: Record<string, { command: string[]; ports: string[]; environment?: Record<string, string> }>;
}

/** Values following each occurrence of `flag` in an argument list. */
const flagValues = (args: string[], flag: string) =>
  args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []));

describe("temporal-dev.yml agrees with the launcher", () => {
  const compose = parse(readFileSync(fromRoot("temporal-dev.yml"), "utf8")) as Compose;
  const launcher = devServerArgs({ dbFile: "/data/dev.db", searchAttributes: searchAttributeCliArgs() });
  const setup = readFileSync(fromRoot("scripts", "setup.sh"), "utf8");

  it("runs the same Temporal dev server ports and search attributes", () => {
    const temporal = compose.services.temporal!;
    expect(temporal.command.slice(0, 2)).to.deep.equal(["server", "start-dev"]);
    for (const flag of [
      "--port",
      "--ui-port",
      "--db-filename",
      "--sqlite-pragma",
      "--dynamic-config-value",
    ]) {
      expect(flagValues(temporal.command, flag), flag).to.deep.equal(flagValues(launcher, flag));
    }
    expect(flagValues(temporal.command, "--search-attribute")).to.have.members(searchAttributeCliArgs());
    expect(temporal.ports.map((p) => p.split(" ")[0])).to.have.members(["7233:7233", "8233:8233"]);
  });

  it("publishes the ports and credentials that scripts/setup.sh uses", () => {
    expect(compose.services.postgres!.ports).to.include("5432:5432");
    const env = compose.services.postgres!.environment!;
    expect(setup).to.include(`PG_USER="${env.POSTGRES_USER}"`);
    expect(setup).to.include(`PG_PASSWORD="${env.POSTGRES_PASSWORD}"`);
    expect(setup).to.include(`PG_DB="${env.POSTGRES_DB}"`);
    expect(compose.services.redis!.ports).to.include("6379:6379");
    expect(setup).to.include("--port 6379");
    expect(compose.services.nats!.ports).to.include("4222:4222");
    expect(compose.services.nats!.command).to.include("-js");
    expect(setup).to.match(/nats-server -js .*-p 4222/);
    expect(compose.services.memcached!.ports).to.include("11211:11211");
    expect(setup).to.include("-p 11211");
  });
});
