// gRPC calls that go wrong, thrown at the service over a raw HTTP/2 client, on the fast
// path (GRPC_SERVER=fast, the default) and on grpc-js (GRPC_SERVER=grpc-js): bad frames,
// oversized and compressed messages, unknown methods, malformed and expired deadlines,
// cancelled calls. Each case names the status both servers give, or each its own where
// they differ; after the cases the service still answers and has counted only the calls
// that reached a decision.

import http2 from "node:http2";
import { expect } from "chai";
import {
  RateLimitResponse_Code as Code,
  RateLimitRequest,
  RateLimitResponse,
} from "../../proto/gen/envoy/service/ratelimit/v3/rls.js";
import { loadSettings } from "../../ratelimit/settings/environment.js";
import { RateLimitProcess, RuntimeDir, request, settingsProblems } from "./harness.js";

const RULES = `domain: fast
descriptors:
  - {key: k, rate_limit: {unit: hour, requests_per_unit: 100}}
`;
const PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

const frame = (message: Uint8Array, flag = 0, length = message.length): Buffer => {
  const prefix = Buffer.alloc(5);
  prefix[0] = flag;
  prefix.writeUInt32BE(length, 1);
  return Buffer.concat([prefix, message]);
};
const hit = (value: string) =>
  Buffer.from(RateLimitRequest.encode(request("fast", [[["k", value]]])).finish());

interface Reply {
  httpStatus: number;
  grpcStatus: number | undefined;
  grpcMessage: string;
  body: Buffer;
}

interface CallSpec {
  path?: string;
  headers?: http2.OutgoingHttpHeaders;
  /** Body chunks, written one by one; the request ends after them unless `keepOpen`. */
  body: Buffer[];
  keepOpen?: boolean;
}

/** One call on `session`: the HTTP status, grpc-status and grpc-message (headers or trailers) and the body. */
function call(session: http2.ClientHttp2Session, spec: CallSpec): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": spec.path ?? PATH,
      "content-type": "application/grpc",
      te: "trailers",
      ...spec.headers,
    });
    let httpStatus = 0;
    let grpcStatus: number | undefined;
    let grpcMessage = "";
    const take = (h: http2.IncomingHttpHeaders) => {
      if (h["grpc-status"] !== undefined) grpcStatus = Number(h["grpc-status"]);
      if (typeof h["grpc-message"] === "string") grpcMessage = decodeURIComponent(h["grpc-message"]);
    };
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      httpStatus = Number(h[":status"]);
      take(h);
    });
    stream.on("trailers", take);
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", reject);
    // The server's side ending is the answer; a request left open is then reset.
    stream.on("end", () => {
      resolve({ httpStatus, grpcStatus, grpcMessage, body: Buffer.concat(chunks) });
      stream.close();
    });
    for (const chunk of spec.body) stream.write(chunk);
    if (!spec.keepOpen) stream.end();
  });
}

interface Case {
  name: string;
  spec: () => CallSpec;
  /** The grpc-status both servers answer, or each server's. */
  status: number | { fast: number; "grpc-js": number };
  /** A part of the fast path's grpc-message. */
  says?: string;
}

const CASES: Case[] = [
  {
    name: "an unknown method",
    spec: () => ({ path: "/envoy.service.ratelimit.v3.RateLimitService/Other", body: [frame(hit("u"))] }),
    status: 12,
  },
  {
    name: "an unknown service",
    spec: () => ({ path: "/no.Such/Method", body: [frame(hit("u"))] }),
    status: 12,
  },
  { name: "no message", spec: () => ({ body: [] }), status: 12, says: "without a message" },
  {
    name: "two messages",
    spec: () => ({ body: [frame(hit("a")), frame(hit("b"))] }),
    status: 12,
    says: "second request message",
  },
  {
    name: "a body that ends inside the prefix",
    spec: () => ({ body: [Buffer.from([0, 0, 0])] }),
    status: { fast: 13, "grpc-js": 12 },
    says: "ended inside a message",
  },
  {
    name: "a body that ends inside the message",
    spec: () => ({ body: [frame(hit("t")).subarray(0, 9)] }),
    status: { fast: 13, "grpc-js": 12 },
    says: "ended inside a message",
  },
  {
    name: "a message larger than 4 MiB (by its prefix)",
    spec: () => ({ body: [frame(Buffer.alloc(16), 0, 5 * 1024 * 1024)], keepOpen: true }),
    status: 8,
    says: "larger than max (5242880 vs 4194304)",
  },
  {
    name: "a message that is not a RateLimitRequest",
    spec: () => ({ body: [frame(Buffer.from([0x0a, 0x10, 0x61]))] }),
    status: 13,
    says: "Error deserializing request",
  },
  {
    name: "a message with an invalid flag byte",
    spec: () => ({ body: [frame(hit("f"), 7)] }),
    status: { fast: 13, "grpc-js": 0 },
    says: "invalid message flags 7",
  },
  {
    name: "a gzip-compressed message (grpc-js reads gzip; the fast path refuses it)",
    spec: () => ({ headers: { "grpc-encoding": "gzip" }, body: [frame(hit("z"), 1)] }),
    status: { fast: 12, "grpc-js": 13 },
    says: 'unsupported encoding "gzip"',
  },
  {
    name: "a compressed message without grpc-encoding",
    spec: () => ({ body: [frame(hit("c"), 1)] }),
    status: { fast: 13, "grpc-js": 0 },
    says: "without a grpc-encoding header",
  },
  {
    name: "a malformed grpc-timeout",
    spec: () => ({ headers: { "grpc-timeout": "soon" }, body: [frame(hit("d"))] }),
    status: 13,
    says: 'Invalid grpc-timeout value "soon"',
  },
  {
    name: "a deadline that passes before the request ends",
    spec: () => ({
      headers: { "grpc-timeout": "100m" },
      body: [frame(hit("d")).subarray(0, 6)],
      keepOpen: true,
    }),
    status: 4,
    says: "Deadline exceeded",
  },
];

for (const server of ["fast", "grpc-js"] as const) {
  describe(`ratelimit gRPC error cases (GRPC_SERVER=${server})`, function () {
    this.timeout(60_000);
    let runtime: RuntimeDir;
    let svc: RateLimitProcess;
    let session: http2.ClientHttp2Session;

    before(async () => {
      runtime = new RuntimeDir({ "fast.yaml": RULES });
      svc = await RateLimitProcess.start({ runtime, backend: "memory", env: { GRPC_SERVER: server } });
      session = http2.connect(`http://${svc.grpcAddress}`);
      session.on("error", () => {});
    });
    after(async () => {
      session?.close();
      await svc?.stop();
      runtime?.cleanup();
    });

    it("answers a plain call with the message ts-proto decodes, grpc-status 0 in the trailers", async () => {
      const reply = await call(session, { body: [frame(hit("plain"))] });
      expect(reply).to.include({ httpStatus: 200, grpcStatus: 0 });
      expect(reply.body.readUInt32BE(1)).to.equal(reply.body.length - 5);
      const answer = RateLimitResponse.decode(reply.body.subarray(5));
      expect(answer.overallCode).to.equal(Code.OK);
      expect(answer.statuses[0]?.limitRemaining).to.equal(99);
    });

    it("reads a message split across DATA frames at any byte", async () => {
      const whole = frame(hit("split"));
      for (const at of [1, 4, 5, 6, whole.length - 1]) {
        const reply = await call(session, { body: [whole.subarray(0, at), whole.subarray(at)] });
        expect(reply.grpcStatus, `split at ${at}`).to.equal(0);
      }
      expect(
        RateLimitResponse.decode((await call(session, { body: [whole] })).body.subarray(5)).statuses[0],
      ).to.have.property("limitRemaining", 100 - 6);
    });

    for (const c of CASES) {
      const expected = typeof c.status === "number" ? c.status : c.status[server];
      it(`${c.name}: grpc-status ${expected}`, async () => {
        const reply = await call(session, c.spec());
        expect(reply.httpStatus).to.equal(200);
        expect(reply.grpcStatus, reply.grpcMessage).to.equal(expected);
        if (server === "fast" && c.says) expect(reply.grpcMessage).to.include(c.says);
      });
    }

    it("answers a request that is not gRPC with HTTP 415", async () => {
      const reply = await call(session, {
        headers: { "content-type": "application/json" },
        body: [Buffer.from("{}")],
      });
      expect(reply.httpStatus).to.equal(415);
    });

    it("takes cancelled calls, before and after their request ended, and keeps serving the session", async () => {
      const before = await svc.stat("ratelimit.service.rate_limit.fast.k.total_hits");
      const cancelled: Promise<void>[] = [];
      for (let i = 0; i < 50; i++) {
        const stream = session.request({
          ":method": "POST",
          ":path": PATH,
          "content-type": "application/grpc",
          te: "trailers",
        });
        stream.on("error", () => {});
        cancelled.push(new Promise((resolve) => stream.on("close", () => resolve())));
        const whole = frame(hit(`cancel${i}`));
        if (i % 2 === 0) {
          stream.write(whole.subarray(0, 7));
          stream.close(http2.constants.NGHTTP2_CANCEL);
        } else {
          stream.end(whole, () => stream.close(http2.constants.NGHTTP2_CANCEL));
        }
      }
      await Promise.all(cancelled);
      const reply = await call(session, { body: [frame(hit("after"))] });
      expect(reply.grpcStatus).to.equal(0);
      // The calls cancelled mid-body never reached a decision.
      await svc.until("the statistics of the decided calls", async () => {
        const hits = (await svc.stat("ratelimit.service.rate_limit.fast.k.total_hits")) - before;
        return hits >= 1 && hits <= 26;
      });
      expect(svc.child.exitCode).to.equal(null);
    });
  });
}

describe("ratelimit GRPC_SERVER setting", () => {
  it("defaults to the fast path, takes grpc-js, and names a bad value", () => {
    expect(loadSettings({}).grpcServer).to.equal("fast");
    expect(loadSettings({ GRPC_SERVER: "grpc-js" }).grpcServer).to.equal("grpc-js");
    expect(settingsProblems({ GRPC_SERVER: "grpcjs" })).to.include(
      'GRPC_SERVER="grpcjs": expected one of fast, grpc-js',
    );
  });
});
