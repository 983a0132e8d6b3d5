import { gzipSync } from "node:zlib";
import { expect } from "chai";
import pg from "pg";
import { rawRequest } from "../support/raw-http.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

const VALID = { endpoint: "https://example.com/hook", eventTypes: ["ledger.created"], name: "ok" };
const json = (o: unknown) => Buffer.from(JSON.stringify(o));

/** Request bodies the configs API must refuse with a 4xx JSON error, storing nothing. */
const CORPUS: { what: string; body: Buffer; headers?: Record<string, string>; says: RegExp }[] = [
  {
    what: "a NUL character in a string",
    body: Buffer.from(
      '{"endpoint":"https://example.com/hook","eventTypes":["ledger.created"],"name":"a\\u0000b"}',
    ),
    says: /name: contains a NUL character/,
  },
  {
    what: "a NUL character in a key",
    body: Buffer.from(
      '{"endpoint":"https://example.com/hook","eventTypes":["ledger.created"],"na\\u0000me":"x"}',
    ),
    says: /key of na.me: contains a NUL character/,
  },
  {
    what: "a lone surrogate",
    body: Buffer.from(
      '{"endpoint":"https://example.com/hook","eventTypes":["ledger.created"],"name":"\\ud800x"}',
    ),
    says: /name: contains a lone surrogate/,
  },
  {
    what: "bytes that are not UTF-8",
    body: Buffer.concat([
      Buffer.from('{"endpoint":"https://example.com/hook","eventTypes":["ledger.created"],"name":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]),
    says: /not valid UTF-8/,
  },
  {
    what: "a repeated key",
    body: Buffer.from(
      '{"endpoint":"https://example.com/hook","endpoint":"https://evil.example/","eventTypes":["ledger.created"]}',
    ),
    says: /duplicate key "endpoint" in the JSON body/,
  },
  {
    what: "JSON nested 5 000 deep",
    body: Buffer.from(
      `{"endpoint":"https://example.com/hook","eventTypes":["ledger.created"],"name":${"[".repeat(5000)}${"]".repeat(5000)}}`,
    ),
    says: /the JSON nests deeper than 1000 levels/,
  },
  {
    what: "a gzip encoding that is not gzip",
    body: json(VALID),
    headers: { "content-encoding": "gzip" },
    says: /request body is not valid gzip data: incorrect header check/,
  },
  {
    what: "a deflate encoding that is not deflate",
    body: json(VALID),
    headers: { "content-encoding": "deflate" },
    says: /request body is not valid deflate data/,
  },
  {
    what: "an unknown encoding",
    body: json(VALID),
    headers: { "content-encoding": "zstd-ish" },
    says: /unsupported content encoding/,
  },
  {
    what: "a charset other than UTF-8",
    body: json(VALID),
    headers: { "content-type": "application/json; charset=latin1" },
    says: /charset/,
  },
  {
    what: "truncated gzip",
    body: gzipSync(json(VALID)).subarray(0, 20),
    headers: { "content-encoding": "gzip" },
    says: /request body is not valid gzip data/,
  },
];

describe("configs API: bad request bodies get a 4xx JSON error and store nothing", function () {
  this.timeout(60_000);
  let api: WebhooksUnderTest;
  let db: pg.Client;

  before(async () => {
    api = await startWebhooks({ args: ["--audit-topic", ""] });
    db = new pg.Client({ connectionString: api.db.url });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await api?.stop();
  });

  const count = async () => Number((await db.query("SELECT count(*) AS n FROM configs")).rows[0].n);

  for (const c of CORPUS) {
    for (const [method, path] of [
      ["POST", "/configs"],
      ["PUT", "/configs/00000000-0000-4000-8000-000000000000"],
    ] as const) {
      it(`${method} ${path.split("/").slice(0, 2).join("/")}: ${c.what}`, async () => {
        const before = await count();
        const res = await fetch(api.url + path, {
          method,
          headers: { "content-type": "application/json", ...c.headers },
          body: c.body,
        });
        const text = await res.text();
        expect(res.status, text).to.be.within(400, 499);
        const body = JSON.parse(text);
        expect(body.errorCode, text).to.equal("VALIDATION");
        expect(body.errorMessage, text).to.match(c.says);
        expect(await count()).to.equal(before);
      });
    }
  }

  for (const query of [
    "cursor=%00",
    "cursor=%FF%FE",
    "pageSize=%00",
    "pageSize=99999999999999999999",
    "endpoint=%00",
    "id=%00",
    "cursor=eyJ4IjoxfQ&pageSize=10",
  ]) {
    it(`GET /configs?${query}: 4xx JSON, nothing changed`, async () => {
      const before = await count();
      const res = await fetch(`${api.url}/configs?${query}`);
      const text = await res.text();
      expect(res.status, text).to.be.within(400, 499);
      expect(JSON.parse(text).errorCode, text).to.equal("VALIDATION");
      expect(await count()).to.equal(before);
    });
  }

  for (const [what, request, status, says] of [
    [
      "a 1 MB query string",
      `GET /configs?${"a".repeat(1 << 20)} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
      431,
      /headers larger/,
    ],
    [
      "a Content-Length longer than the body",
      'POST /configs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{"endpoint":"https://example.com/","eventTypes":["a.b"]}',
      400,
      // The 5 bytes are read as the body, the rest as a next request: either answer names it.
      /malformed JSON body|malformed request/,
    ],
    [
      "a malformed Content-Length",
      "POST /configs HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1x\r\n\r\n{",
      400,
      /malformed Content-Length header/,
    ],
    ["a broken request line", "GARBAGE\r\n\r\n", 400, /malformed request/],
  ] as const) {
    it(`answers ${what} with ${status} in the error format, storing nothing`, async () => {
      const before = await count();
      const answer = await rawRequest(Number(new URL(api.url).port), request);
      expect(answer.status, answer.body).to.equal(status);
      expect(answer.headers["content-type"]).to.match(/application\/json/);
      const body = JSON.parse(answer.body);
      expect(body.errorCode).to.equal("VALIDATION");
      expect(body.errorMessage).to.match(says);
      expect(await count()).to.equal(before);
    });
  }

  it("still accepts a real gzip body", async () => {
    const res = await fetch(`${api.url}/configs`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: gzipSync(json(VALID)),
    });
    expect(res.status, await res.clone().text()).to.equal(200);
    expect(((await res.json()) as { data: object }).data).to.include({ name: "ok" });
  });
});
