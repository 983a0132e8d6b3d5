import { gzipSync } from "node:zlib";
import { expect } from "chai";
import { Redis } from "ioredis";
import { httpRequest, rawRequest } from "../support/raw-http.js";
import { RateLimitProcess, REDIS_URL, RuntimeDir } from "./harness.js";

// A corpus of malformed requests thrown at the HTTP port of the rate limit
// service (Redis counters): each gets a 4xx JSON error naming the problem, and
// no counter in Redis changes.

const RULES = `domain: fuzz
descriptors:
  - key: k
    rate_limit: { unit: hour, requests_per_unit: 100 }
`;

interface Case {
  name: string;
  request: Buffer | string;
  status: number;
  says: string;
  halfClose?: boolean;
}

const json = { "content-type": "application/json" };
/** A request that would count one hit of descriptor k=v if it were accepted. */
const hit = (v: string) => `{"domain":"fuzz","descriptors":[{"entries":[{"key":"k","value":"${v}"}]}]}`;
const post = (headers: Record<string, string>, body: Buffer | string) =>
  httpRequest("POST", "/json", headers, body);

const CORPUS: Case[] = [
  {
    name: "duplicate keys",
    request: post(
      json,
      '{"domain":"other","domain":"fuzz","descriptors":[{"entries":[{"key":"k","value":"v"}]}]}',
    ),
    status: 400,
    says: 'duplicate key "domain"',
  },
  {
    name: "duplicate nested keys",
    request: post(
      json,
      '{"domain":"fuzz","descriptors":[{"entries":[{"key":"k","value":"a","\\u0076alue":"b"}]}]}',
    ),
    status: 400,
    says: 'duplicate key "descriptors[0].entries[0].value"',
  },
  {
    name: "duplicate keys in two spellings",
    request: post(
      json,
      '{"domain":"fuzz","hitsAddend":1,"hits_addend":5,"descriptors":[{"entries":[{"key":"k","value":"v"}]}]}',
    ),
    status: 400,
    says: "given twice",
  },
  {
    name: "invalid UTF-8",
    request: post(
      json,
      Buffer.concat([Buffer.from(hit("v").slice(0, -5)), Buffer.from([0xff]), Buffer.from('"}]}]}')]),
    ),
    status: 400,
    says: "not valid UTF-8",
  },
  { name: "a lone surrogate", request: post(json, hit("\\ud800")), status: 400, says: "lone surrogate" },
  { name: "syntax error", request: post(json, "{not json"), status: 400, says: "invalid JSON" },
  {
    name: "JSON nested 30 000 deep",
    request: post(json, `${"[".repeat(30_000)}${"]".repeat(30_000)}`),
    status: 400,
    says: "invalid JSON",
  },
  {
    name: "a body over 4 MiB",
    request: post(json, `{"domain":"${"a".repeat(4_200_000)}"}`),
    status: 413,
    says: "larger than",
  },
  {
    name: "gzip Content-Encoding on a body that is not gzip",
    request: post({ ...json, "content-encoding": "gzip" }, hit("v")),
    status: 415,
    says: 'Content-Encoding "gzip"',
  },
  {
    name: "a real gzip body",
    request: post({ ...json, "content-encoding": "gzip" }, gzipSync(hit("v"))),
    status: 415,
    says: "uncompressed",
  },
  {
    name: "a form content type",
    request: post({ "content-type": "application/x-www-form-urlencoded" }, hit("v")),
    status: 415,
    says: "application/json",
  },
  {
    name: "text/plain",
    request: post({ "content-type": "text/plain" }, hit("v")),
    status: 415,
    says: "text/plain",
  },
  {
    name: "a non-UTF-8 charset",
    request: post({ "content-type": "application/json; charset=latin1" }, hit("v")),
    status: 415,
    says: "latin1",
  },
  // The reference decides whatever the method: without a body that is a 400.
  {
    name: "GET /json without a body",
    request: httpRequest("GET", "/json", {}),
    status: 400,
    says: "empty request body",
  },
  {
    name: "an unknown path",
    request: httpRequest("POST", "/jsonx", json, hit("v")),
    status: 404,
    says: "no route",
  },
  {
    name: "a 1 MB query string",
    request: httpRequest("POST", `/json?q=${"a".repeat(1_000_000)}`, json, hit("v")),
    status: 431,
    says: "larger than the server accepts",
  },
  { name: "a garbage request line", request: "HELLO\r\n\r\n", status: 400, says: "malformed" },
  {
    name: "a header name with a space",
    request: "POST /json HTTP/1.1\r\nhost: x\r\nbad header: 1\r\n\r\n",
    status: 400,
    says: "header",
  },
  {
    name: "Content-Length that is not a number",
    request: `POST /json HTTP/1.1\r\nhost: x\r\ncontent-length: x\r\n\r\n${hit("v")}`,
    status: 400,
    says: "Content-Length",
  },
  {
    name: "two Content-Lengths",
    request: `POST /json HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\n${hit("v")}`,
    status: 400,
    says: "Content-Length",
  },
  {
    name: "a bad chunk size",
    request: `POST /json HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n${hit("v")}\r\n0\r\n\r\n`,
    status: 400,
    says: "chunk",
  },
  {
    name: "Content-Length shorter than the body",
    request: post({ ...json, "content-length": "20" }, hit("v")),
    status: 400,
    says: "Content-Length",
  },
  {
    name: "Content-Length longer than the body (connection half-closed)",
    request: post({ ...json, "content-length": "500" }, hit("v")),
    status: 400,
    says: "before the request was complete",
    halfClose: true,
  },
  {
    name: "unknown field",
    request: post(json, '{"domain":"fuzz","descriptors":[{"entries":[{"key":"k","valu":"v"}]}]}'),
    status: 400,
    says: 'unknown field "valu"',
  },
];

describe("ratelimit HTTP: malformed requests", function () {
  this.timeout(60_000);
  let runtime: RuntimeDir;
  let svc: RateLimitProcess;
  let redis: Redis;

  /** Every counter of this service's key prefix, with its value. */
  const counters = async () => {
    const keys = (await redis.keys(`${svc.prefix}*`)).sort();
    const values = keys.length ? await redis.mget(keys) : [];
    return Object.fromEntries(keys.map((k, i) => [k, values[i]]));
  };

  before(async () => {
    runtime = new RuntimeDir({ "fuzz.yaml": RULES });
    svc = await RateLimitProcess.start({ runtime });
    const [host, port] = REDIS_URL.split(":");
    redis = new Redis({ host, port: Number(port) });
  });
  after(async () => {
    redis?.disconnect();
    await svc?.stop();
    runtime?.cleanup();
  });

  it("answers every request of the corpus with a 4xx JSON error naming the problem, and counts nothing", async () => {
    // One real hit first, so a stray count would show as a change, not only as a new key.
    expect((await svc.json(JSON.parse(hit("v")))).status).to.equal(200);
    const before = await counters();
    expect(Object.keys(before)).to.have.length(1);
    const failures: string[] = [];
    const port = Number(new URL(svc.httpUrl).port);
    for (const c of CORPUS) {
      const answer = await rawRequest(port, c.request, { halfClose: c.halfClose === true });
      let message = "";
      try {
        const body = JSON.parse(answer.body) as { error: { status: number; message: string } };
        if (body.error.status === answer.status) message = body.error.message;
      } catch {
        // reported below as not an error body
      }
      const problems = [
        answer.status !== c.status && `status ${answer.status}, expected ${c.status}`,
        answer.headers["content-type"] !== "application/json" &&
          `content type "${answer.headers["content-type"]}"`,
        !message && "not a JSON error body",
        !message.includes(c.says) && `message does not say "${c.says}"`,
      ].filter(Boolean);
      if (problems.length)
        failures.push(`${c.name}: ${problems.join("; ")}\n    ${answer.body.slice(0, 300)}`);
    }
    expect(failures, failures.join("\n")).to.deep.equal([]);
    expect(await counters()).to.deep.equal(before);
    const again = await svc.json(JSON.parse(hit("v")));
    expect((again.json().statuses as { limitRemaining: number }[])[0]?.limitRemaining).to.equal(98);
  });
});
