import { gzipSync } from "node:zlib";
import { expect } from "chai";
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";
import { httpRequest, rawRequest } from "../support/raw-http.js";
import { type Running, start, stop } from "./command.js";

// A corpus of malformed requests thrown at the `entity-server` command (config
// writable): each gets a 4xx error naming the problem, in JSON or in XML when
// the request asked for XML, and the database is left exactly as it was.

const ID = "0b6f3c1e-2a4d-4e8f-9a1b-3c5d7e9f1a2b";
const SECRET = "bmV3LXNlY3JldC12YWx1ZS0yNC1ieXRl";

interface Case {
  name: string;
  /** Raw request bytes (Connection: close is added to well-formed ones by `http`). */
  request: Buffer | string;
  status: number;
  /** Text the error message must contain (case-insensitive). */
  says: string;
  xml?: boolean;
  halfClose?: boolean;
}

const json = { "content-type": "application/json" };
const form = { "content-type": "application/x-www-form-urlencoded" };
const validConfig = `{"endpoint":"http://a.test/hook","eventTypes":["a.b"],"secret":"${SECRET}"`;

const CORPUS: Case[] = [
  // bodies
  {
    name: "duplicate JSON keys",
    request: httpRequest("PUT", "/config.json", json, `${validConfig},"name":"a","name":"b"}`),
    status: 400,
    says: 'duplicate key "name"',
  },
  {
    name: "duplicate nested JSON keys",
    request: httpRequest(
      "PUT",
      "/config.json",
      json,
      `{"endpoint":"http://a.test","eventTypes":["a.b"],"x":{"k":1,"\\u006b":2}}`,
    ),
    status: 400,
    says: 'duplicate key "x.k"',
  },
  {
    name: "invalid UTF-8 in a JSON body",
    request: httpRequest(
      "PUT",
      "/config.json",
      json,
      Buffer.concat([Buffer.from(`${validConfig},"name":"`), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    ),
    status: 400,
    says: "not valid UTF-8",
  },
  {
    name: "invalid UTF-8 in a form body",
    request: httpRequest(
      "PUT",
      "/config.json",
      form,
      Buffer.concat([
        Buffer.from("endpoint=http://a.test&eventTypes[]=a.b&name="),
        Buffer.from([0xc3, 0x28]),
      ]),
    ),
    status: 400,
    says: "not valid UTF-8",
  },
  {
    name: "malformed percent-encoding in a form",
    request: httpRequest("PUT", "/config.json", form, "endpoint=http://a.test&eventTypes[]=a.b&name=%ff"),
    status: 400,
    says: "percent-encoding",
  },
  {
    name: "an encoded lone surrogate in a form",
    request: httpRequest(
      "PUT",
      "/config.json",
      form,
      "endpoint=http://a.test&eventTypes[]=a.b&name=%ed%a0%80",
    ),
    status: 400,
    says: "percent-encoding",
  },
  {
    name: "a lone surrogate escaped in JSON",
    request: httpRequest("PUT", "/config.json", json, `${validConfig},"name":"\\ud800"}`),
    status: 400,
    says: "lone surrogate",
  },
  {
    name: "NUL in a JSON string",
    request: httpRequest("PUT", "/config.json", json, `${validConfig},"name":"a\\u0000b"}`),
    status: 400,
    says: "NUL",
  },
  {
    name: "NUL in a form value",
    request: httpRequest("PUT", "/config.json", form, "endpoint=http://a.test&eventTypes[]=a.b&name=a%00b"),
    status: 400,
    says: "NUL",
  },
  {
    name: "NUL in a parameter name",
    request: httpRequest("GET", "/config.json?na%00me=x", {}),
    status: 400,
    says: "NUL",
  },
  {
    name: "syntax error in JSON",
    request: httpRequest("PUT", "/config.json", json, '{"endpoint":'),
    status: 400,
    says: "malformed request body",
  },
  {
    name: "a JSON array body",
    request: httpRequest("PUT", "/config.json", json, "[1,2]"),
    status: 400,
    says: "named parameters",
  },
  {
    name: "JSON nested 30 000 deep",
    request: httpRequest("PUT", "/config.json", json, `${"[".repeat(30_000)}${"]".repeat(30_000)}`),
    status: 400,
    says: "malformed request body",
  },
  {
    name: "a body over the limit",
    request: httpRequest("PUT", "/config.json", json, `{"name":"${"a".repeat(1_100_000)}"}`),
    status: 413,
    says: "larger than",
  },
  // encodings and content types
  {
    name: "gzip Content-Encoding on a body that is not gzip",
    request: httpRequest("PUT", "/config.json", { ...json, "content-encoding": "gzip" }, validConfig),
    status: 400,
    says: "not valid gzip",
  },
  {
    name: "deflate Content-Encoding on a body that is not deflate",
    request: httpRequest("PUT", "/config.json", { ...json, "content-encoding": "deflate" }, validConfig),
    status: 400,
    says: "not valid deflate",
  },
  {
    name: "truncated gzip",
    request: httpRequest(
      "PUT",
      "/config.json",
      { ...json, "content-encoding": "gzip" },
      gzipSync(`${validConfig}}`).subarray(0, 20),
    ),
    status: 400,
    says: "gzip",
  },
  {
    name: "an unknown Content-Encoding",
    request: httpRequest("PUT", "/config.json", { ...json, "content-encoding": "zstd-ish" }, validConfig),
    status: 415,
    says: "zstd-ish",
  },
  {
    name: "an unknown charset",
    request: httpRequest(
      "PUT",
      "/config.json",
      { "content-type": "application/json; charset=klingon" },
      "{}",
    ),
    status: 415,
    says: "klingon",
  },
  {
    name: "a text/plain body",
    request: httpRequest("PUT", "/config.json", { "content-type": "text/plain" }, "endpoint=x"),
    status: 415,
    says: "text/plain",
  },
  {
    name: "an XML body",
    request: httpRequest("PUT", "/config.xml", { "content-type": "application/xml" }, "<config/>"),
    status: 415,
    says: "application/xml",
    xml: true,
  },
  {
    name: "a body with no Content-Type",
    request: httpRequest("PUT", "/config.json", {}, "endpoint=x"),
    status: 415,
    says: "none",
  },
  // query strings, paths, headers
  {
    name: "a 1 MB query string",
    request: httpRequest("GET", `/config.json?name=${"a".repeat(1_000_000)}`, {}),
    status: 431,
    says: "larger than the server accepts",
  },
  {
    name: "a 1 MB query string on an XML path",
    request: httpRequest("GET", `/config.xml?name=${"a".repeat(1_000_000)}`, {}),
    status: 431,
    says: "larger than the server accepts",
    xml: true,
  },
  {
    name: "malformed percent-encoding in the query",
    request: httpRequest("GET", "/config.json?name=%E0%A4%A", {}),
    status: 400,
    says: "percent-encoding",
  },
  {
    name: "invalid UTF-8 percent-encoded in the query",
    request: httpRequest("GET", "/config.json?name=%ff", {}),
    status: 400,
    says: "percent-encoding",
  },
  {
    name: "raw non-ASCII bytes in the URL",
    request: Buffer.concat([
      Buffer.from("GET /config.json?name="),
      Buffer.from([0xe9]),
      Buffer.from(" HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"),
    ]),
    status: 400,
    says: "invalid URL",
  },
  {
    name: "malformed percent-encoding in the path",
    request: httpRequest("GET", "/config/%E0%A4%A.json", {}),
    status: 400,
    says: "percent-encoding",
  },
  {
    name: "a malformed id",
    request: httpRequest("GET", "/config/not-a-uuid.json", {}),
    status: 404,
    says: "no config",
  },
  {
    name: "a NUL in the id",
    request: httpRequest("POST", `/config/${ID.slice(0, 8)}%00.json`, json, '{"name":"x"}'),
    status: 404,
    says: "no config",
  },
  {
    name: "a filter that is not a uuid",
    request: httpRequest("GET", "/attempt.json?configId=nope", {}),
    status: 400,
    says: "a UUID",
  },
  {
    name: "an unsupported _format",
    request: httpRequest("GET", "/config?_format=php", {}),
    status: 406,
    says: "php",
  },
  {
    name: "_format given twice",
    request: httpRequest("GET", "/config?_format=xml&_format=json", {}),
    status: 400,
    says: "more than once",
  },
  {
    name: "a malformed Authorization header",
    request: httpRequest("GET", "/config.json", { authorization: "Basic %%%" }),
    status: 401,
    says: "malformed Authorization",
  },
  {
    name: "a header name with a space",
    request: "GET /config.json HTTP/1.1\r\nhost: x\r\nbad header: y\r\n\r\n",
    status: 400,
    says: "header",
  },
  { name: "a garbage request line", request: "HELLO THERE\r\n\r\n", status: 400, says: "malformed" },
  {
    name: "an unknown HTTP version",
    request: "GET /config.json HTTP/9.9\r\nhost: x\r\n\r\n",
    status: 400,
    says: "malformed",
  },
  // framing
  {
    name: "Content-Length that is not a number",
    request:
      "PUT /config.json HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: abc\r\n\r\n{}",
    status: 400,
    says: "Content-Length",
  },
  {
    name: "two different Content-Lengths",
    request:
      "PUT /config.json HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}",
    status: 400,
    says: "Content-Length",
  },
  {
    name: "Content-Length and chunked together",
    request:
      "PUT /config.json HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    status: 400,
    says: "Transfer-Encoding",
  },
  {
    name: "a chunk size that is not hex",
    request:
      "PUT /config.json HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    status: 400,
    says: "chunk",
  },
  {
    name: "Content-Length shorter than the body",
    request: httpRequest("PUT", "/config.json", { ...json, "content-length": "10" }, `${validConfig}}`),
    status: 400,
    says: "is the Content-Length right",
  },
  {
    name: "Content-Length longer than the body (connection half-closed)",
    request: httpRequest("PUT", "/config.json", { ...json, "content-length": "500" }, `${validConfig}}`),
    status: 400,
    says: "before the request was complete",
    halfClose: true,
  },
  // config validation (the webhooks API's rules)
  {
    name: "an endpoint that is not a URL",
    request: httpRequest("PUT", "/config.json", json, '{"endpoint":"not a url","eventTypes":["a.b"]}'),
    status: 400,
    says: "endpoint must be an absolute http(s) URL",
  },
  {
    name: "a short secret",
    request: httpRequest(
      "PUT",
      "/config.json",
      json,
      '{"endpoint":"http://a.test","eventTypes":["a.b"],"secret":"short"}',
    ),
    status: 400,
    says: "secret must be",
  },
  {
    name: "an event type without a dot",
    request: httpRequest("PUT", "/config.json", json, '{"endpoint":"http://a.test","eventTypes":["nodot"]}'),
    status: 400,
    says: "eventTypes[0]",
  },
  {
    name: "a cloud metadata endpoint",
    request: httpRequest(
      "PUT",
      "/config.json",
      json,
      '{"endpoint":"http://169.254.169.254/latest","eventTypes":["a.b"]}',
    ),
    status: 400,
    says: "egress policy",
  },
  {
    name: "a timestamp set by the caller",
    request: httpRequest("PUT", "/config.json", json, `${validConfig},"createdAt":"2020-01-01T00:00:00Z"}`),
    status: 400,
    says: "createdAt is maintained by the service",
  },
];

/** The error message of an error body (XML: the whole text is searched). */
function message(body: string, xml?: boolean): string {
  if (xml) return body;
  try {
    return String((JSON.parse(body) as { error: { message: unknown } }).error.message);
  } catch {
    return "";
  }
}

describe("entity-server: malformed requests", function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let sql: pg.Client;
  let r: Running;
  let port: number;

  /** Every row of the product tables (and the list version), as text. */
  const snapshot = async () => {
    const { rows } = await sql.query(
      `SELECT (SELECT coalesce(string_agg(c::text, E'\\n' ORDER BY c.id), '') FROM configs c) AS configs,
              (SELECT coalesce(string_agg(a::text, E'\\n' ORDER BY a.id), '') FROM attempts a) AS attempts,
              (SELECT version FROM config_list_version) AS version`,
    );
    return rows[0] as Record<string, string>;
  };

  before(async () => {
    db = await createTestDatabase();
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    await sql.query(
      `INSERT INTO configs (id, endpoint, event_types, secret) VALUES ($1, 'http://stored.test', '{a.b}', $2)`,
      [ID, SECRET],
    );
    r = await start(["--storage-sqldb-conn-string", db.url, "--writable", "config"]);
    port = Number(new URL(r.baseUrl).port);
  });
  after(async () => {
    await stop(r);
    await sql?.end();
    await db?.drop();
  });

  it("answers every request of the corpus with a 4xx naming the problem, and stores nothing", async () => {
    const before = await snapshot();
    const failures: string[] = [];
    for (const c of CORPUS) {
      const answer = await rawRequest(port, c.request, { halfClose: c.halfClose === true });
      const type = answer.headers["content-type"] ?? "";
      const problems = [
        answer.status !== c.status && `status ${answer.status}, expected ${c.status}`,
        !type.startsWith(c.xml ? "application/xml" : "application/json") && `content type "${type}"`,
        !message(answer.body, c.xml).toLowerCase().includes(c.says.toLowerCase()) &&
          `message does not say "${c.says}"`,
        !(c.xml ? /^<\?xml[^>]*\?><error><code>[A-Z_]+<\/code>/ : /^\{"error":\{"code":"[A-Z_]+"/).test(
          answer.body,
        ) && "not an error body",
      ].filter(Boolean);
      if (problems.length)
        failures.push(`${c.name}: ${problems.join("; ")}\n    ${answer.body.slice(0, 300)}`);
    }
    expect(failures, failures.join("\n")).to.deep.equal([]);
    expect(await snapshot()).to.deep.equal(before);
    // The server is still up and serving.
    expect((await fetch(`${r.baseUrl}/config/${ID}.json`)).status).to.equal(200);
    expect(r.output()).not.to.include('"level":50');
  });
});
