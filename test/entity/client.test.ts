import { expect } from "chai";
import type { RunningServer } from "../../common/http-server.js";
import { EntityClient } from "../../entity/client/client.js";
import type { EntityConfiguration } from "../../entity/client/configuration.js";
import { Entity } from "../../entity/client/entity.js";
import {
  EntityAuthenticationError,
  EntityConflictError,
  EntityMethodNotAllowedError,
  EntityNotFoundError,
  EntityTransportError,
  EntityValidationError,
} from "../../entity/client/errors.js";
import { StandardResponseTransformer } from "../../entity/client/response-transformer.js";
import { FetchTransport, type Transport, type TransportRequest } from "../../entity/client/transport.js";
import { QueryFormatUrlGenerator } from "../../entity/client/url-generator.js";
import { attemptData, closeHarness, type Harness, openHarness, serveHttp, testServer } from "./support.js";

let baseUrl = "";

/** The configs table as a client entity, in one response format. */
function configClass(format: "xml" | "json") {
  return class WebhookConfig extends Entity {
    id?: string;
    name = "";
    endpoint = "";
    eventTypes: string[] = [];
    secret?: string;
    active = true;
    createdAt?: Date;
    updatedAt?: Date;

    static override configure(c: EntityConfiguration) {
      c.setUrl(`${baseUrl}/`).setName("config").setResponseType(format).setFields({
        eventTypes: "string[]",
        createdAt: "date",
        updatedAt: "date",
        previousSecretExpiresAt: "date",
        secret: "string",
      });
    }

    getEndpoint(): string {
      return this.endpoint;
    }

    setEndpoint(endpoint: string): this {
      this.endpoint = endpoint;
      return this;
    }
  };
}

function attemptClass(format: "xml" | "json") {
  return class DeliveryAttempt extends Entity {
    id?: string;
    statusCode = 0;
    retryAttempt = 0;
    status = "";
    error: string | null = null;
    config: Record<string, unknown> = {};
    nextRetryAfter: Date | null = null;

    static override configure(c: EntityConfiguration) {
      c.setUrl(baseUrl).setName("attempt").setResponseType(format).field("nextRetryAfter", "date");
    }
  };
}

/** Wraps the real fetch transport and records what went over the wire. */
class RecordingTransport implements Transport {
  readonly sent: TransportRequest[] = [];
  private readonly inner = new FetchTransport();
  send(request: TransportRequest) {
    this.sent.push(request);
    return this.inner.send(request);
  }
}

describe("entity client against the real entity server over HTTP", () => {
  let h: Harness;
  let http: RunningServer & { baseUrl: string };
  let configId: string;

  before(async () => {
    h = await openHarness();
    const server = testServer(h)
      .registerAction("count", async (ctx) => {
        return (await ctx.binding.repository.list({ where: {}, skip: 0, take: 1000 })).length;
      })
      // A custom action on one entity that changes it and answers the entity.
      .addEntityAction(
        "config",
        "deactivate",
        async (ctx) => ctx.binding.repository.update(ctx.id(), { active: false }),
        { writes: true },
      );
    http = await serveHttp(server);
    baseUrl = http.baseUrl;
    const c = await h.prisma.config.create({
      data: { endpoint: "http://seed.test", eventTypes: ["s"], secret: "x" },
    });
    configId = c.id;
    for (let n = 0; n < 2; n++) await h.prisma.attempt.create({ data: attemptData(configId, n) });
  });
  after(async () => {
    await http?.close();
    await closeHarness(h);
  });

  for (const format of ["xml", "json"] as const) {
    describe(`${format} responses`, () => {
      const Config = configClass(format);
      const Attempt = attemptClass(format);
      let transport: RecordingTransport;
      let client: EntityClient;

      beforeEach(() => {
        transport = new RecordingTransport();
        client = new EntityClient(transport);
        Config.useClient(client);
        Attempt.useClient(client);
      });

      it("saves a new entity with PUT {url}/{name}.{format}, form-encoded, and hydrates the answer", async () => {
        const c = new Config();
        c.setEndpoint("http://new.test/hook");
        c.eventTypes = ["ledger.committed", "payments.created"];
        c.secret = "write-only";
        await c.save();
        const req = transport.sent[0]!;
        expect(req.method).to.equal("PUT");
        expect(req.url).to.equal(`${baseUrl}/config.${format}`);
        expect(req.headers["content-type"]).to.equal("application/x-www-form-urlencoded");
        const body = new URLSearchParams(req.body);
        expect(body.get("endpoint")).to.equal("http://new.test/hook");
        expect(body.getAll("eventTypes[]")).to.deep.equal(["ledger.committed", "payments.created"]);
        expect(c.id).to.match(/^[0-9a-f-]{36}$/);
        expect(c.createdAt).to.be.instanceOf(Date);
        expect(c.active).to.equal(true);
        expect((await h.prisma.config.findUnique({ where: { id: c.id! } }))?.secret).to.equal("write-only");
      });

      it("finds by id with GET {url}/{name}/{id}.{format}, typed, one object per id", async () => {
        const a = await Config.find(configId);
        expect(transport.sent[0]!.method).to.equal("GET");
        expect(transport.sent[0]!.url).to.equal(`${baseUrl}/config/${configId}.${format}`);
        expect(a).to.be.instanceOf(Config);
        expect(a.getEndpoint()).to.equal("http://seed.test");
        expect(a.eventTypes).to.deep.equal(["s"]);
        expect(a.updatedAt).to.be.instanceOf(Date);
        expect(a.secret).to.equal(undefined);
        const b = await Config.find(configId);
        expect(b).to.equal(a);
        const listed = await Config.findAll({ endpoint: "http://seed.test" });
        expect(listed).to.have.length(1);
        expect(listed[0]).to.equal(a);
      });

      it("updates a persisted entity with POST {url}/{name}/{id}.{format}", async () => {
        const c = await Config.find(configId);
        c.name = `renamed-${format}`;
        await c.save();
        const post = transport.sent[1]!;
        expect(post.method).to.equal("POST");
        expect(post.url).to.equal(`${baseUrl}/config/${configId}.${format}`);
        expect((await h.prisma.config.findUnique({ where: { id: configId } }))?.name).to.equal(
          `renamed-${format}`,
        );
        expect(c.name).to.equal(`renamed-${format}`);
      });

      it("lists with filters and paging in the query string", async () => {
        const all = await Attempt.findAll();
        expect(all.map((a) => a.retryAttempt).sort()).to.deep.equal([0, 1]);
        const failed = await Attempt.findAll({ status: "failed" });
        expect(failed).to.have.length(1);
        expect(failed[0]!.error).to.equal("boom 1");
        expect(failed[0]!.statusCode).to.equal(501);
        expect(failed[0]!.config).to.deep.include({ endpoint: "http://example.test/hook" });
        const page = await Attempt.findAll({}, { page: 2, perPage: 1 });
        expect(page).to.have.length(1);
        expect(transport.sent.at(-1)!.url).to.equal(`${baseUrl}/attempt.${format}?_page=2&_max_per_page=1`);
        const nulls = await Attempt.findAll({ status: "toRetry" });
        expect(nulls[0]!.error).to.equal(null);
        expect(nulls[0]!.nextRetryAfter).to.equal(null);
      });

      it("deletes with DELETE {url}/{name}/{id}.{format}", async () => {
        const c = new Config();
        c.endpoint = "http://doomed.test";
        c.secret = "s";
        await c.save();
        const id = c.id!;
        await c.delete();
        expect(transport.sent[1]!.method).to.equal("DELETE");
        expect(transport.sent[1]!.url).to.equal(`${baseUrl}/config/${id}.${format}`);
        expect(await h.prisma.config.findUnique({ where: { id } })).to.equal(null);
        expect(client.identityMap.get(Config, id)).to.equal(undefined);
      });

      it("runs custom actions on the resource and on one entity", async () => {
        expect(await Attempt.execute("GET", "count")).to.equal(2);
        expect(transport.sent[0]!.url).to.equal(`${baseUrl}/attempt/count.${format}`);
        const c = await Config.find(configId);
        c.active = true;
        const answer = await c.call("deactivate");
        expect(transport.sent[2]!.method).to.equal("POST");
        expect(transport.sent[2]!.url).to.equal(`${baseUrl}/config/${configId}/deactivate.${format}`);
        expect(answer).to.equal(c);
        expect(c.active).to.equal(false);
        const viaFind = await Config.find(configId, "deactivate");
        expect(transport.sent[3]!.url).to.equal(`${baseUrl}/config/${configId}/deactivate.${format}`);
        expect(viaFind).to.equal(c);
        await h.prisma.config.update({ where: { id: configId }, data: { active: true } });
      });

      it("surfaces HTTP errors as typed exceptions with status and body", async () => {
        const missing = await Config.find("00000000-0000-0000-0000-000000000000").catch((e) => e);
        expect(missing).to.be.instanceOf(EntityNotFoundError);
        expect(missing.status).to.equal(404);
        expect(missing.code).to.equal("NOT_FOUND");
        expect(missing.body).to.include("NOT_FOUND");

        const bad = await Attempt.findAll({ statusCode: "abc" }).catch((e) => e);
        expect(bad).to.be.instanceOf(EntityValidationError);
        expect(bad.field).to.equal("statusCode");

        const a = (await Attempt.findAll())[0]!;
        const readOnly = await a.save().catch((e) => e);
        expect(readOnly).to.be.instanceOf(EntityMethodNotAllowedError);
        expect(readOnly.code).to.equal("READ_ONLY");

        const conflict = await client
          .request(Config, "PUT", {}, { id: configId, endpoint: "x", secret: "y" })
          .catch((e) => e);
        expect(conflict).to.be.instanceOf(EntityConflictError);
      });
    });
  }

  it("reports a server that is not there as a transport error", async () => {
    class Nowhere extends Entity {
      static override configure(c: EntityConfiguration) {
        c.setUrl("http://127.0.0.1:1").setName("config");
      }
    }
    Nowhere.useClient(new EntityClient());
    const err = await Nowhere.find("1").catch((e) => e);
    expect(err).to.be.instanceOf(EntityTransportError);
  });

  it("sends configured credentials as HTTP Basic", async () => {
    const secured = await serveHttp(testServer(h).setCredentials("api", "key"));
    try {
      const make = (password: string) =>
        class Secured extends Entity {
          id?: string;
          static override configure(c: EntityConfiguration) {
            c.setUrl(secured.baseUrl).setName("config").setCredentials("api", password);
          }
        };
      const Good = make("key");
      const Bad = make("nope");
      Good.useClient(new EntityClient());
      expect((await Good.find(configId)).id).to.equal(configId);
      const err = await Bad.find(configId).catch((e) => e);
      expect(err).to.be.instanceOf(EntityAuthenticationError);
      expect(err.status).to.equal(401);
    } finally {
      await secured.close();
    }
  });

  it("takes a pluggable transport, URL generator and response transformer", async () => {
    const seen: string[] = [];
    class Upper extends StandardResponseTransformer {
      override transform(body: string, format: "xml" | "json") {
        const out = super.transform(body, format);
        if (out.kind === "entity") out.data.endpoint = String(out.data.endpoint).toUpperCase();
        return out;
      }
    }
    class Custom extends Entity {
      id?: string;
      endpoint = "";
      static override configure(c: EntityConfiguration) {
        c.setUrl(baseUrl)
          .setName("config")
          .setResponseType("xml")
          .setUrlGenerator(new QueryFormatUrlGenerator())
          .setResponseTransformer(new Upper());
      }
    }
    const inner = new FetchTransport();
    Custom.useClient(
      new EntityClient({
        send: (req) => {
          seen.push(`${req.method} ${req.url}`);
          return inner.send(req);
        },
      }),
    );
    const c = await Custom.find(configId);
    expect(seen).to.deep.equal([`GET ${baseUrl}/config/${configId}?_format=xml`]);
    expect(c.endpoint).to.equal("HTTP://SEED.TEST");
  });

  it("keeps unknown response keys apart from fields and never sends them back", async () => {
    class Narrow extends Entity {
      id?: string;
      endpoint = "";
      static override configure(c: EntityConfiguration) {
        c.setUrl(baseUrl).setName("config");
      }
    }
    const transport = new RecordingTransport();
    Narrow.useClient(new EntityClient(transport));
    const n = await Narrow.find(configId);
    expect(n.extra()).to.have.property("eventTypes");
    expect(n).not.to.have.property("eventTypes");
    await n.save();
    expect([...new URLSearchParams(transport.sent[1]!.body).keys()].sort()).to.deep.equal(["endpoint", "id"]);
  });
});
