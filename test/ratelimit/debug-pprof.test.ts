// The debug port's profiling endpoints under /debug/pprof/: a CPU profile taken while
// the service answers calls, a heap snapshot, the index and the refusals.

import { expect } from "chai";
import { pause, RateLimitProcess, RuntimeDir, uniq } from "./harness.js";

const CONFIG = `domain: prof
descriptors:
  - {key: a, rate_limit: {unit: hour, requests_per_unit: 1000000}}
`;

describe("ratelimit debug port profiling", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let svc: RateLimitProcess;

  before(async () => {
    runtime = new RuntimeDir({ "prof.yaml": CONFIG });
    svc = await RateLimitProcess.start({ runtime, backend: "memory" });
  });
  after(async () => {
    await svc?.stop();
    runtime?.cleanup();
  });

  const get = async (path: string) => {
    const res = await fetch(`${svc.debugUrl}${path}`);
    return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
  };

  it("lists the profiles on / and /debug/pprof/", async () => {
    expect((await get("/")).body).to.include("/debug/pprof/:");
    const index = await get("/debug/pprof/");
    expect(index.status).to.equal(200);
    expect(index.body).to.include("/debug/pprof/profile?seconds=30:");
    expect(index.body).to.include("/debug/pprof/heap:");
    const unknown = await get("/debug/pprof/goroutine");
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.include("/debug/pprof/heap");
  });

  it("takes a CPU profile over ?seconds=N while calls are served, one at a time", async () => {
    const profile = get("/debug/pprof/profile?seconds=1");
    await pause(200); // the first request must reach the service first
    const busy = await get("/debug/pprof/profile?seconds=1");
    expect(busy.status).to.equal(409);
    for (let i = 0; i < 50; i++) await svc.call("prof", [[["a", uniq()]]]);
    const res = await profile;
    expect(res.status).to.equal(200);
    expect(res.type).to.equal("application/json");
    const p = JSON.parse(res.body) as {
      nodes: { id: number; callFrame: { functionName: string; url: string } }[];
      startTime: number;
      endTime: number;
      samples: number[];
    };
    expect(p.nodes.length).to.be.greaterThan(1);
    expect(p.samples.length).to.be.greaterThan(0);
    expect(p.endTime - p.startTime).to.be.at.least(900_000); // microseconds
    // The service's own code shows up in the profile.
    expect(p.nodes.some((n) => n.callFrame.url.includes("/ratelimit/"))).to.equal(true);
    // Once done, another profile can be taken.
    expect((await get("/debug/pprof/profile?seconds=1")).status).to.equal(200);
  });

  it("refuses a bad seconds value, naming it", async () => {
    for (const bad of ["0", "abc", "1.5", "601"]) {
      const res = await get(`/debug/pprof/profile?seconds=${bad}`);
      expect(res.status, bad).to.equal(400);
      expect(res.body).to.include(`seconds=${bad}: expected a whole number of seconds from 1 to 600`);
    }
  });

  it("takes a heap snapshot that parses as a V8 heap snapshot", async () => {
    const res = await get("/debug/pprof/heap");
    expect(res.status).to.equal(200);
    const snap = JSON.parse(res.body) as {
      snapshot: { meta: { node_fields: string[] }; node_count: number };
      nodes: number[];
      strings: string[];
    };
    expect(snap.snapshot.meta.node_fields).to.include("name");
    expect(snap.snapshot.node_count).to.be.greaterThan(1000);
    expect(snap.nodes.length).to.equal(snap.snapshot.node_count * snap.snapshot.meta.node_fields.length);
    expect(snap.strings).to.include("RateLimitService");
    // The service still answers afterwards.
    expect((await svc.call("prof", [[["a", uniq()]]])).statuses).to.have.length(1);
  });
});
