// `ratelimit-client`: asks a rate limit service for one decision over gRPC and prints
// the response.
//   ratelimit-client -dial_string localhost:8081 -domain mydomain \
//     -descriptors key1=value1,key2=value2 -descriptors key3=value3

import * as grpc from "@grpc/grpc-js";
import { ignoreClosedStdout } from "../common/closed-stdout.js";
import type { RateLimitDescriptor } from "../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js";
import {
  type RateLimitResponse,
  RateLimitServiceClient,
} from "../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { responseToJson } from "../ratelimit/server/json-codec.js";

const USAGE = `usage: ratelimit-client -dial_string <host:port> -domain <domain> -descriptors <k=v[,k=v...]> [-descriptors ...]
  -dial_string  server address (default "localhost:8081"; "unix:/path" for a unix socket)
  -domain       rate limit domain
  -descriptors  one descriptor as comma-separated name=value pairs; repeat for several descriptors
  -hits_addend  hits to add for every descriptor (default 0, which the service counts as 1)
  -timeout      call timeout in seconds (default 10)`;

class UsageError extends Error {}

interface Options {
  dialString: string;
  domain: string;
  descriptors: RateLimitDescriptor[];
  hitsAddend: number;
  timeoutSeconds: number;
}

function parseDescriptor(text: string): RateLimitDescriptor {
  const entries = text.split(",").map((pair) => {
    const i = pair.indexOf("=");
    if (i <= 0)
      throw new UsageError(
        `-descriptors ${JSON.stringify(text)}: expected name=value pairs separated by commas`,
      );
    return { key: pair.slice(0, i), value: pair.slice(i + 1) };
  });
  return { entries, limit: undefined, hitsAddend: undefined };
}

/** Go-style flags: `-name value`, `-name=value`, `--name value`. */
export function parseClientArgs(argv: string[]): Options {
  const opts: Options = {
    dialString: "localhost:8081",
    domain: "",
    descriptors: [],
    hitsAddend: 0,
    timeoutSeconds: 10,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "-h" || arg === "-help" || arg === "--help") throw new UsageError("");
    const m = /^--?([a-z_]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new UsageError(`unexpected argument ${JSON.stringify(arg)}`);
    const name = m[1]!;
    let value = m[2];
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`flag needs an argument: -${name}`);
    }
    switch (name) {
      case "dial_string":
        opts.dialString = value;
        break;
      case "domain":
        opts.domain = value;
        break;
      case "descriptors":
        opts.descriptors.push(parseDescriptor(value));
        break;
      case "hits_addend":
        if (!/^\d+$/.test(value))
          throw new UsageError(`-hits_addend ${JSON.stringify(value)}: expected an unsigned integer`);
        opts.hitsAddend = Number(value);
        break;
      case "timeout":
        if (!(Number(value) > 0))
          throw new UsageError(`-timeout ${JSON.stringify(value)}: expected a positive number`);
        opts.timeoutSeconds = Number(value);
        break;
      default:
        throw new UsageError(`flag provided but not defined: -${name}`);
    }
  }
  return opts;
}

async function main(): Promise<number> {
  ignoreClosedStdout();
  let opts: Options;
  try {
    opts = parseClientArgs(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      if (err.message) console.error(`ratelimit-client: ${err.message}`);
      console.error(USAGE);
      return 2;
    }
    throw err;
  }
  const request = { domain: opts.domain, descriptors: opts.descriptors, hitsAddend: opts.hitsAddend };
  console.log(`domain: ${opts.domain}`);
  console.log(
    `descriptors: ${opts.descriptors.map((d) => `[${d.entries.map((e) => `${e.key}=${e.value}`).join(", ")}]`).join(" ")}`,
  );
  const client = new RateLimitServiceClient(opts.dialString, grpc.credentials.createInsecure());
  try {
    const response = await new Promise<RateLimitResponse>((resolve, reject) => {
      const deadline = Date.now() + opts.timeoutSeconds * 1000;
      client.shouldRateLimit(request, new grpc.Metadata(), { deadline }, (err, res) =>
        err ? reject(err) : resolve(res),
      );
    });
    console.log(`response: ${JSON.stringify(responseToJson(response), null, 2)}`);
    return 0;
  } catch (err) {
    const e = err as grpc.ServiceError;
    console.error(
      `request error: ${e.code !== undefined ? `${grpc.status[e.code]}: ${e.details}` : e.message}`,
    );
    return 1;
  } finally {
    client.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`ratelimit-client: ${err.message}`);
    process.exit(1);
  },
);
