import type { Router } from "express";
import type { PrismaClient } from "../common/db/database.js";
import type { DeadLetter } from "../generated/prisma/client.js";
import type { DeadLetterReplayer } from "./dead-letter-replay.js";
import { notFound, validation } from "./errors.js";
import { afterCursor, pageOf, readPage } from "./paging.js";
import type { RouteAccess } from "./route-access.js";
import { cursorJson } from "./serialize.js";
import { tenantScopeOf } from "./tenant-scope.js";
import { allowQuery, UUID_RE } from "./validation.js";

const DEFAULT_PAGE = 100;
/** Characters of the message shown in lists (GET /dead-letters/{id} has all of it). */
const PREVIEW_CHARS = 200;
const STATUSES = ["pending", "replayed"];

// ignoreBOM keeps a leading byte order mark in the text: the message is shown byte for byte.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The message as text when it is UTF-8 (events are JSON), else in base64. */
function messageFields(bytes: Uint8Array, preview: boolean) {
  try {
    const text = utf8.decode(bytes);
    return preview ? { messagePreview: text.slice(0, PREVIEW_CHARS) } : { message: text };
  } catch {
    const b64 = Buffer.from(bytes).toString("base64");
    return preview ? { messagePreviewBase64: b64.slice(0, PREVIEW_CHARS) } : { messageBase64: b64 };
  }
}

export function deadLetterJson(d: DeadLetter, opts: { preview: boolean }) {
  return {
    id: d.id,
    topic: d.topic,
    position: d.position,
    ...(d.eventType !== null ? { eventType: d.eventType } : {}),
    ...(d.configId !== null ? { configID: d.configId } : {}),
    ...(d.tenantId !== null ? { tenantID: d.tenantId } : {}),
    kind: d.kind,
    reason: d.reason,
    deliveryCount: d.deliveryCount,
    status: d.status,
    replayAttempts: d.replayAttempts,
    ...(d.lastReplayError !== null ? { lastReplayError: d.lastReplayError } : {}),
    ...(d.replayedAt ? { replayedAt: d.replayedAt.toISOString() } : {}),
    messageBytes: d.message.length,
    ...messageFields(d.message, opts.preview),
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
  };
}

/** Messages whose deliveries could not start: list, inspect, replay after fixing the cause, or delete. */
export function deadLetterRoutes(
  access: RouteAccess,
  prisma: PrismaClient,
  replay: DeadLetterReplayer,
): Router {
  const r = access.router();

  const find = async (id: string): Promise<DeadLetter> => {
    const d = UUID_RE.test(id) ? await prisma.deadLetter.findUnique({ where: { id } }) : null;
    if (!d) throw notFound(`dead letter ${id} not found`);
    return d;
  };

  r.get(
    "/dead-letters",
    allowQuery("status", "topic", "configID", "pageSize", "cursor"),
    async (req, res) => {
      const { status, topic, configID } = req.query as Record<string, string | undefined>;
      if (status !== undefined && !STATUSES.includes(status)) {
        throw validation(`status must be one of ${STATUSES.join(", ")}, got ${JSON.stringify(status)}`);
      }
      if (configID !== undefined && !UUID_RE.test(configID)) {
        throw validation(`configID must be a UUID, got ${JSON.stringify(configID)}`);
      }
      const page = readPage(req.query, DEFAULT_PAGE)!;
      const rows = await prisma.deadLetter.findMany({
        where: {
          ...(status ? { status: status as DeadLetter["status"] } : {}),
          ...(topic !== undefined ? { topic } : {}),
          ...(configID ? { configId: configID } : {}),
          // A tenant-scoped token lists its tenant's only.
          ...(tenantScopeOf(res) ? { tenantId: tenantScopeOf(res)!.id } : {}),
          ...afterCursor("createdAt", page),
        },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: page.pageSize + 1,
      });
      const { items, next } = pageOf(rows, page, (d) => d.createdAt);
      res.json(
        cursorJson(
          items.map((d) => deadLetterJson(d, { preview: true })),
          { pageSize: page.pageSize, next },
        ),
      );
    },
  );

  r.get("/dead-letters/:id", allowQuery(), async (req, res) => {
    res.json({ data: deadLetterJson(await find(String(req.params.id)), { preview: false }) });
  });

  r.post("/dead-letters/:id/replay", allowQuery(), async (req, res) => {
    const { deadLetter, deliveries } = await replay((await find(String(req.params.id))).id);
    res.json({
      data: {
        deadLetter: deadLetterJson(deadLetter, { preview: true }),
        deliveries: deliveries.map((s) => ({
          configID: s.configId,
          webhookID: s.webhookId,
          workflowID: s.workflowId,
          started: s.started,
        })),
      },
    });
  });

  r.delete("/dead-letters/:id", allowQuery(), async (req, res) => {
    const d = await find(String(req.params.id));
    await prisma.deadLetter.delete({ where: { id: d.id } });
    res.json({ data: { id: d.id, deleted: true } });
  });

  return r;
}
