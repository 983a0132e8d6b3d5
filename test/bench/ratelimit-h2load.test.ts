// The bench's h2load generator: its command line for closed and open loops, the parsing
// of its per-request log, and (when h2load is installed) a short real run against a
// canned gRPC answer from a node:http2 server.

import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import {
  achievedRate,
  calibratePacing,
  h2loadArgs,
  h2loadMissing,
  pacedArgs,
  parseH2loadLog,
  runH2load,
  runH2loadPaced,
  SHOULD_RATE_LIMIT_PATH,
  timingScript,
} from "../../bench/ratelimit/h2load.js";

const plan = {
  address: "127.0.0.1:1234",
  bodyFile: "/tmp/b.bin",
  logFile: "/tmp/l.tsv",
  seconds: 5,
  connections: 4,
  concurrency: 64,
};

describe("ratelimit bench: h2load generator", () => {
  it("spreads the closed loop's concurrency over the connections as streams", () => {
    const args = h2loadArgs(plan);
    expect(args.slice(0, 6)).to.deep.equal(["-D", "5", "-c", "4", "-m", "16"]);
    expect(args).to.include.members(["--log-file", "/tmp/l.tsv", "-d", "/tmp/b.bin", "te: trailers"]);
    expect(args).to.not.include("--rps");
    expect(args.at(-1)).to.equal(`http://127.0.0.1:1234${SHOULD_RATE_LIMIT_PATH}`);
  });

  it("rounds the streams per connection up when the concurrency does not divide evenly", () => {
    const uneven = h2loadArgs({ ...plan, concurrency: 10, connections: 3 });
    expect(uneven[uneven.indexOf("-m") + 1]).to.equal("4");
  });

  it("paces an open loop with a timing script on one connection per h2load", () => {
    expect(timingScript("http://h/p", 0.25, 3)).to.equal(
      "0.000\thttp://h/p\n0.250\thttp://h/p\n0.500\thttp://h/p\n",
    );
    const args = pacedArgs({ bodyFile: "/tmp/b.bin", logFile: "/tmp/l.tsv", scriptFile: "/tmp/s.tsv" });
    expect(args.slice(0, 6)).to.deep.equal(["-c", "1", "-m", "1024", "--timing-script-file", "/tmp/s.tsv"]);
    expect(args).to.not.include("--rps");
  });

  it("reads durations of HTTP 200 answers in ms, sorted, and counts the others as failed", () => {
    const log = parseH2loadLog(
      "1700000000000000\t200\t2500\n1700000000000100\t200\t900\n1700000000000200\t-1\t10\n",
    );
    expect([...log.latenciesMs]).to.deep.equal([0.9, 2.5]);
    expect(log.failed).to.equal(1);
    // Three requests started over 200 µs: two intervals, 10 000/s.
    expect(achievedRate(log)).to.equal(10_000);
    expect(() => parseH2loadLog("garbage\n")).to.throw(/unexpected h2load log line/);
  });

  it("reports a run that made no request as an error, not as 0 requests/s", async () => {
    // `true` exits 0 without writing a log, as h2load does when it never connects.
    const plan = { address: "127.0.0.1:9", seconds: 1, connections: 1, concurrency: 1 };
    let error: Error | undefined;
    await runH2load(plan, Buffer.alloc(5), "true").catch((err: Error) => {
      error = err;
    });
    expect(error?.message).to.match(/h2load made no requests/);
  });

  it("names the missing program", async () => {
    expect(await h2loadMissing("/nonexistent/h2load")).to.match(/not found.*nghttp2-client/);
  });

  it("drives a gRPC endpoint and returns one duration per answered request", async function () {
    if (await h2loadMissing()) this.skip();
    let calls = 0;
    const server = http2.createServer();
    server.on("stream", (stream) => {
      stream.on("data", () => {});
      stream.on("end", () => {
        calls++;
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(Buffer.from([0, 0, 0, 0, 0]));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
      const log = await runH2load(
        { address, seconds: 1, connections: 2, concurrency: 4 },
        Buffer.from([0, 0, 0, 0, 0]),
      );
      expect(log.failed).to.equal(0);
      expect(log.latenciesMs.length).to.be.greaterThan(50).and.at.most(calls);
      // Paced at 400/s over two connections for 2 s, after the calibration runs.
      const before = calls;
      const pace = { address, seconds: 2, connections: 2, rate: 400 };
      const spacingMs = await calibratePacing(pace, Buffer.from([0, 0, 0, 0, 0]));
      // 5 ms per connection, less what h2load falls behind: how much depends on the machine's
      // load (2.4 ms in a loaded CI run), so only the direction is checked, never the time.
      expect(spacingMs).to.be.above(0).and.at.most(5.5);
      const paced = await runH2loadPaced(pace, spacingMs, Buffer.from([0, 0, 0, 0, 0]));
      expect(paced.failed).to.equal(0);
      expect(paced.latenciesMs.length).to.be.greaterThan(0);
      expect(calls - before).to.be.greaterThan(paced.latenciesMs.length);
      // Paced, not flat out: at most what the compensated spacing allows (5 / spacing × 400/s).
      expect(achievedRate(paced))
        .to.be.above(0)
        .and.at.most((5 / spacingMs) * 400 * 1.25);
    } finally {
      server.close();
    }
  });
});
