import { expect } from "chai";
import { XMLValidator } from "fast-xml-parser";
import type { RunningServer } from "../../common/http-server.js";
import type { EntityServer } from "../../entity/server/server.js";
import { attemptData, closeHarness, type Harness, openHarness, serveHttp, testServer } from "./support.js";

interface Answer {
  status: number;
  headers: Headers;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: assertions walk the JSON freely
  json: () => any;
}

describe("express adapter over a real HTTP server", () => {
  let h: Harness;
  let server: EntityServer;
  let http: RunningServer & { baseUrl: string };
  let configId: string;

  const call = async (
    method: string,
    path: string,
    init: { body?: string; headers?: Record<string, string> } = {},
  ) => {
    const res = await fetch(`${http.baseUrl}${path}`, { method, ...init });
    const body = await res.text();
    return { status: res.status, headers: res.headers, body, json: () => JSON.parse(body) } as Answer;
  };
  const form = (fields: Record<string, string>) => ({
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });

  before(async () => {
    h = await openHarness();
    const config = await h.prisma.config.create({
      data: { endpoint: "http://a.test", eventTypes: ["x.y"], secret: "top-secret" },
    });
    configId = config.id;
    await h.prisma.attempt.create({ data: attemptData(configId, 0) });
    server = testServer(h).addEntityAction("config", "stats", async (ctx) => ({
      total: (await ctx.binding.repository.list({ where: {}, skip: 0, take: 1000 })).length,
    }));
    server.addEntityAction("config", "echo", (ctx) => ({
      id: String(ctx.request.id),
      method: ctx.request.method,
    }));
    http = await serveHttp(server);
  });
  after(async () => {
    await http?.close();
    await closeHarness(h);
  });

  it("GET /{alias}/{id}.xml and .json answer 200 with the entity", async () => {
    const xml = await call("GET", `/config/${configId}.xml`);
    expect(xml.status).to.equal(200);
    expect(xml.headers.get("content-type")).to.match(/^application\/xml/);
    expect(XMLValidator.validate(xml.body)).to.equal(true);
    expect(xml.body).to.include(`<id>${configId}</id>`);
    const json = await call("GET", `/config/${configId}.json`);
    expect(json.headers.get("content-type")).to.match(/^application\/json/);
    expect(json.json().id).to.equal(configId);
    expect(json.body).not.to.include("top-secret");
  });

  it("picks the format from the extension, then _format, then Accept, else JSON", async () => {
    expect((await call("GET", `/config/${configId}?_format=xml`)).headers.get("content-type")).to.match(
      /xml/,
    );
    const accept = await call("GET", `/config/${configId}`, { headers: { accept: "application/xml" } });
    expect(accept.headers.get("content-type")).to.match(/xml/);
    expect((await call("GET", `/config/${configId}`)).headers.get("content-type")).to.match(/json/);
    const conflict = await call("GET", `/config/${configId}.xml?_format=json`);
    expect(conflict.status).to.equal(400);
  });

  it("maps methods to actions with the right status codes", async () => {
    const created = await call(
      "PUT",
      "/config.json",
      form({ endpoint: "http://new.test", secret: "s", "eventTypes[]": "a" }),
    );
    expect(created.status).to.equal(201);
    const id = created.json().id;
    expect(created.json().eventTypes).to.deep.equal(["a"]);
    const viaPost = await call("POST", "/config.json", {
      body: JSON.stringify({ endpoint: "http://json.test", secret: "s", eventTypes: ["j"] }),
      headers: { "content-type": "application/json" },
    });
    expect(viaPost.status).to.equal(201);
    const updated = await call("POST", `/config/${id}.json`, form({ name: "n1" }));
    expect([updated.status, updated.json().name]).to.deep.equal([200, "n1"]);
    const patched = await call("PATCH", `/config/${id}.json`, form({ "eventTypes[]": "" }));
    expect([patched.status, patched.json().eventTypes]).to.deep.equal([200, []]);
    const listed = await call("GET", "/config.json?endpoint=http%3A%2F%2Fnew.test");
    expect(listed.json().map((c: { id: string }) => c.id)).to.deep.equal([id]);
    const head = await call("HEAD", `/config/${id}.json`);
    expect([head.status, head.body]).to.deep.equal([200, ""]);
    const deleted = await call("DELETE", `/config/${id}.json`);
    expect(deleted.status).to.equal(200);
    expect((await call("GET", `/config/${id}.json`)).status).to.equal(404);
    const overridden = await call("POST", `/config/${viaPost.json().id}.json`, form({ _method: "delete" }));
    expect(overridden.status).to.equal(200);
    expect(await h.prisma.config.count()).to.equal(1);
  });

  it("routes /{alias}/{action} to a registered action and /{alias}/{id}/{action} with the id", async () => {
    const stats = await call("GET", "/config/stats.xml");
    expect(stats.status).to.equal(200);
    expect(stats.body).to.include('<total type="integer">1</total>');
    const echo = await call("POST", `/config/${configId}/echo.json`);
    expect(echo.json()).to.deep.equal({ id: configId, method: "post" });
    const unknown = await call("GET", `/config/${configId}/nope.json`);
    expect([unknown.status, unknown.json().error.code]).to.deep.equal([404, "UNKNOWN_ACTION"]);
  });

  it("refuses writes on read-only aliases with 405 and an Allow header", async () => {
    const res = await call("PUT", "/attempt.xml", form({ payload: "x" }));
    expect(res.status).to.equal(405);
    expect(res.headers.get("allow")).to.equal("GET, HEAD");
    expect(res.body).to.include("<code>READ_ONLY</code>");
  });

  const malformed: [
    string,
    string,
    string,
    { body?: string; headers?: Record<string, string> },
    number,
    string,
  ][] = [
    ["unknown alias", "GET", "/nope.json", {}, 404, "UNKNOWN_ENTITY"],
    ["too many path segments", "GET", "/config/a/b/c.json", {}, 404, "UNKNOWN_ENTITY"],
    ["root path", "GET", "/", {}, 404, "UNKNOWN_ENTITY"],
    ["DELETE on a collection", "DELETE", "/config.json", {}, 405, "METHOD_NOT_ALLOWED"],
    ["PATCH on a collection", "PATCH", "/config.json", {}, 405, "METHOD_NOT_ALLOWED"],
    ["bad percent-encoding", "GET", "/config/%E0%A4%A.json", {}, 400, "VALIDATION"],
    ["reserved _entity in the query", "GET", "/config.json?_entity=attempt", {}, 400, "VALIDATION"],
    ["reserved _id in the body", "POST", "/config.json", { ...form({ _id: "x" }) }, 400, "VALIDATION"],
    ["unknown reserved parameter", "GET", "/config.json?_order=id", {}, 400, "VALIDATION"],
    [
      "same key in query and body",
      "POST",
      "/config.json?name=a",
      { ...form({ name: "b" }) },
      400,
      "VALIDATION",
    ],
    ["_method on a GET", "GET", "/config.json?_method=delete", {}, 400, "VALIDATION"],
    [
      "malformed JSON body",
      "POST",
      "/config.json",
      { body: "{nope", headers: { "content-type": "application/json" } },
      400,
      "VALIDATION",
    ],
    [
      "JSON body that is not an object",
      "POST",
      "/config.json",
      { body: "[1]", headers: { "content-type": "application/json" } },
      400,
      "VALIDATION",
    ],
    [
      "unsupported body type",
      "POST",
      "/config.json",
      { body: "hi", headers: { "content-type": "text/plain" } },
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    ],
    [
      "body over the limit",
      "POST",
      "/config.json",
      { ...form({ name: "x".repeat(40_000) }) },
      413,
      "PAYLOAD_TOO_LARGE",
    ],
    ["bad integer in a filter", "GET", "/attempt.json?statusCode=abc", {}, 400, "VALIDATION"],
    ["bad page", "GET", "/attempt.json?_page=0", {}, 400, "VALIDATION"],
    ["id that is not a uuid", "GET", "/config/not-a-uuid.json", {}, 404, "NOT_FOUND"],
  ];
  for (const [name, method, path, init, status, code] of malformed) {
    it(`${name} → ${status} ${code}, in both formats`, async () => {
      for (const format of ["json", "xml"]) {
        const p = path.replace(/\.json\b/, `.${format}`);
        const res = await call(method, p, init);
        expect(res.status, `${p}: ${res.body}`).to.equal(status);
        if (p.includes(".xml")) {
          expect(res.headers.get("content-type")).to.match(/^application\/xml/);
          expect(XMLValidator.validate(res.body)).to.equal(true);
          expect(res.body).to.include(`<code>${code}</code>`);
          continue;
        }
        expect(res.json().error.code, p).to.equal(code);
      }
    });
  }

  it("answers 405 with the allowed methods in Allow", async () => {
    const res = await call("DELETE", "/config.json");
    expect(res.headers.get("allow")).to.equal("GET, HEAD, PUT, POST");
  });

  describe("with credentials", () => {
    let secured: RunningServer & { baseUrl: string };
    before(async () => {
      secured = await serveHttp(testServer(h).setCredentials("admin", "pa:ss"));
    });
    after(() => secured?.close());

    const get = (auth?: string) =>
      fetch(`${secured.baseUrl}/config/${configId}.xml`, { headers: auth ? { authorization: auth } : {} });
    const basic = (user: string, pass: string) =>
      `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

    it("answers 401 with WWW-Authenticate without or with wrong credentials", async () => {
      for (const auth of [undefined, basic("admin", "wrong"), "Bearer abc", "Basic !!!"]) {
        const res = await get(auth);
        expect(res.status, String(auth)).to.equal(401);
        expect(res.headers.get("www-authenticate")).to.match(/^Basic realm=/);
        expect(await res.text()).to.include("<code>UNAUTHENTICATED</code>");
      }
    });

    it("serves with the right Basic credentials (a colon in the password is fine)", async () => {
      const res = await get(basic("admin", "pa:ss"));
      expect(res.status).to.equal(200);
    });
  });
});
