import { PrismaPg } from "@prisma/adapter-pg";
import { expect } from "chai";
import pg from "pg";
import type { Row } from "../../entity/index.js";
import { PrismaEntityManager } from "../../entity/prisma/prisma-entity-manager.js";
import { PrismaClient } from "../../generated/prisma/client.js";
import { attemptData, closeHarness, type Harness, openHarness, testServer } from "./support.js";

/** A Prisma client on its own pool that counts the statements Prisma sends. */
function countingClient(url: string, timeZone?: string) {
  const pool = new pg.Pool({
    connectionString: url,
    max: 4,
    ...(timeZone ? { options: `-c TimeZone=${timeZone}` } : {}),
  });
  const prisma = new PrismaClient({
    adapter: new PrismaPg(pool),
    log: [{ emit: "event", level: "query" }],
  });
  const counter = { queries: 0 };
  prisma.$on("query", () => counter.queries++);
  const close = async () => {
    await prisma.$disconnect();
    await pool.end();
  };
  return { pool, prisma, counter, close };
}

const keysOf = (rows: Row[]) => rows.map((r) => Object.keys(r).join(","));

describe("entity lists: plain SQL reads and batching", () => {
  let h: Harness;

  before(async () => {
    h = await openHarness();
    const texts = ["", "plain", 'quo"te', "back\\slash", "a,b", "{braces}", "NULL", "snow ☃ 😀", " spaced "];
    for (let n = 0; n < texts.length; n++) {
      const c = await h.prisma.config.create({
        data: {
          name: texts[n]!,
          endpoint: `http://a.test/${n}`,
          eventTypes: n === 0 ? [] : texts.slice(0, n),
          secret: `s${n}`,
          active: n % 2 === 0,
          ...(n % 3 === 0
            ? {
                previousSecret: "old",
                previousSecretExpiresAt: new Date(Date.UTC(2000, 1, 29, 23, 59, 59, 7)),
              }
            : {}),
          ...(n % 4 === 1
            ? { deactivatedReason: "failing", deactivatedAt: new Date(Date.UTC(1999, 11, 31, 0, 0, 0, 0)) }
            : {}),
          createdAt: new Date(Date.UTC(2026, 10, 27, 5, 30, n, n * 111)),
        },
      });
      const attempt = attemptData(c.id, n);
      await h.prisma.attempt.create({
        data: { ...attempt, config: n === 0 ? { nested: { deep: [1, null, "x"] }, n: 1.5 } : attempt.config },
      });
    }
  });
  after(() => closeHarness(h));

  it("answers every list as Prisma does (values, types, key order), in any session time zone, without Prisma", async () => {
    for (const timeZone of [undefined, "America/St_Johns", "Asia/Kathmandu"]) {
      const c = countingClient(h.db.url, timeZone);
      try {
        const sql = new PrismaEntityManager(c.prisma, { pool: c.pool });
        const prismaOnly = new PrismaEntityManager(c.prisma);
        const configs = (await h.prisma.config.findMany({ orderBy: { id: "asc" } })).map((r) => r.createdAt);
        const queries: [string, Row, number, number][] = [
          ["Config", {}, 0, 20],
          ["Config", {}, 3, 2],
          ["Config", { name: 'quo"te' }, 0, 5],
          ["Config", { active: true }, 1, 3],
          ["Config", { createdAt: configs[2]! }, 0, 5],
          ["Attempt", {}, 0, 1000],
          ["Attempt", { status: "failed", retryAttempt: 2 }, 0, 5],
          ["Attempt", { status: "toRetry" }, 0, 5],
          ["Attempt", { statusCode: 503 }, 0, 5],
        ];
        for (const [model, where, skip, take] of queries) {
          const before = c.counter.queries;
          const rows = await sql.repository(model).list({ where, skip, take });
          expect(c.counter.queries, `${model} ${JSON.stringify(where)} went through Prisma`).to.equal(before);
          const expected = await prismaOnly.repository(model).list({ where, skip, take });
          expect(rows, `${model} ${JSON.stringify(where)} in ${timeZone}`).to.deep.equal(expected);
          expect(keysOf(rows)).to.deep.equal(keysOf(expected));
          // Elsewhere a date filter finds nothing: Prisma sends the UTC fields, read in the session's zone.
          if (timeZone === undefined) expect(rows.length).to.be.greaterThan(0);
        }
      } finally {
        await c.close();
      }
    }
  });

  it("leaves to Prisma what plain SQL would not answer exactly, with Prisma's answer or error", async () => {
    const c = countingClient(h.db.url);
    try {
      const sql = new PrismaEntityManager(c.prisma, { pool: c.pool });
      const prismaOnly = new PrismaEntityManager(c.prisma);
      const outcome = (p: Promise<Row[]>) =>
        p.then(
          (rows) => ({ rows }),
          (err: Error) => ({ err: err.message }),
        );
      for (const [model, where] of [
        ["Config", { deactivatedReason: null }],
        ["Config", { eventTypes: ["plain"] }],
        ["Attempt", { status: "bogus" }],
        ["Attempt", { status: "to retry" }],
        ["Attempt", { statusCode: "503" }],
        ["Attempt", { configId: "not-a-uuid" }],
        ["Config", { name: { contains: "a" } }],
      ] as [string, Row][]) {
        const before = c.counter.queries;
        const answer = await outcome(sql.repository(model).list({ where, skip: 0, take: 5 }));
        // Rows came from Prisma's own statement; an error is Prisma's (plain SQL would have given rows or none).
        if ("rows" in answer) expect(c.counter.queries, JSON.stringify(where)).to.be.greaterThan(before);
        expect(answer, JSON.stringify(where)).to.deep.equal(
          await outcome(prismaOnly.repository(model).list({ where, skip: 0, take: 5 })),
        );
      }
    } finally {
      await c.close();
    }
  });

  it("renders each entity of a list as it renders alone, every field kind, in both formats", async () => {
    const server = testServer(h);
    const declaration = '<?xml version="1.0" encoding="UTF-8"?>';
    for (const alias of ["config", "attempt"]) {
      const list = await server.handle({ _entity: alias, _format: "json", _max: "1000" });
      const ids = JSON.parse(list.body).map((r: { id: string }) => r.id);
      expect(ids.length).to.equal(9);
      const one = (id: string, format: string) => server.handle({ _entity: alias, _id: id, _format: format });
      const json = await Promise.all(ids.map((id: string) => one(id, "json")));
      expect(list.body).to.equal(`[${json.map((r) => r.body).join(",")}]`);
      const xml = await Promise.all(ids.map((id: string) => one(id, "xml")));
      const xmlList = await server.handle({ _entity: alias, _format: "xml", _max: "1000" });
      expect(xmlList.body).to.equal(
        `${declaration}<${alias} type="collection" count="9">${xml.map((r) => r.body.slice(declaration.length)).join("")}</${alias}>`,
      );
    }
  });

  it("answers concurrent lists of one filter from one query, each exactly its own page, in its own objects", async () => {
    const c = countingClient(h.db.url);
    try {
      const repo = new PrismaEntityManager(c.prisma).repository("Config");
      const windows: [Row, number, number][] = [
        [{}, 0, 2],
        [{}, 1, 3],
        [{}, 0, 2],
        [{}, 6, 10],
        [{ active: true }, 0, 2],
        [{ active: true }, 2, 2],
        [{}, 500, 5],
      ];
      const alone: Row[][] = [];
      for (const [where, skip, take] of windows) alone.push(await repo.list({ where, skip, take }));
      const before = c.counter.queries;
      const together = await Promise.all(
        windows.map(([where, skip, take]) => repo.list({ where, skip, take })),
      );
      // {} 0..16 in one query, {active} 0..4 in one, {} from 500 alone (its gap is larger than its page)
      expect(c.counter.queries - before).to.equal(3);
      expect(together).to.deep.equal(alone);
      expect(together[0]![0]).not.to.equal(together[2]![0]);
    } finally {
      await c.close();
    }
  });
});
