import type { Router } from "express";
import { fromDbStatus } from "../activities/attempts-store.js";
import type { PrismaClient } from "../common/db/database.js";
import type { DeliveryControl } from "./delivery-control.js";
import { listDeliveries, readDeliveryListQuery } from "./delivery-list.js";
import { notFound } from "./errors.js";
import { afterCursor, pageOf, readPage } from "./paging.js";
import type { Replayer } from "./replay.js";
import type { RouteAccess } from "./route-access.js";
import { attemptJson, cursorJson, unsentDeliveryJson, WITH_EVENT_BODY } from "./serialize.js";
import { allowQuery, UUID_RE } from "./validation.js";

const DEFAULT_PAGE = 100;

/** A page of attempts, newest first. */
async function attemptsPage(prisma: PrismaClient, where: object, query: Record<string, unknown>) {
  const page = readPage(query, DEFAULT_PAGE)!;
  const rows = await prisma.attempt.findMany({
    where: { ...where, ...afterCursor("createdAt", page) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: page.pageSize + 1,
    include: WITH_EVENT_BODY,
  });
  const { items, next } = pageOf(rows, page, (a) => a.createdAt);
  return cursorJson(items.map(attemptJson), { pageSize: page.pageSize, next });
}

/** The config id of the path, 404 unless it names a config or one with attempts left. */
async function knownConfig(prisma: PrismaClient, raw: unknown): Promise<string> {
  const id = String(raw);
  const exists = UUID_RE.test(id) && (await prisma.config.count({ where: { id } })) > 0;
  const hasAttempts =
    UUID_RE.test(id) && (await prisma.attempt.count({ where: { configId: id }, take: 1 })) > 0;
  // A deleted config's attempts stay listable until retention removes them.
  if (!exists && !hasAttempts) throw notFound(`config ${id} not found`);
  return id;
}

/** Deliveries and their attempts: what the reference service stored but never showed. */
export function deliveryRoutes(
  access: RouteAccess,
  prisma: PrismaClient,
  replay: Replayer,
  deliveries: DeliveryControl,
): Router {
  const r = access.router();

  r.get("/configs/:id/attempts", allowQuery("pageSize", "cursor"), async (req, res) => {
    const id = await knownConfig(prisma, req.params.id);
    res.json(await attemptsPage(prisma, { configId: id }, req.query));
  });

  r.get(
    "/configs/:id/deliveries",
    allowQuery("status", "eventType", "pageSize", "cursor"),
    async (req, res) => {
      const id = await knownConfig(prisma, req.params.id);
      res.json(await listDeliveries(prisma, id, readDeliveryListQuery(req.query)));
    },
  );

  r.get("/webhooks/:webhookId/attempts", allowQuery("pageSize", "cursor"), async (req, res) => {
    const webhookId = String(req.params.webhookId);
    const known =
      UUID_RE.test(webhookId) &&
      ((await prisma.attempt.count({ where: { webhookId }, take: 1 })) > 0 ||
        (await prisma.unsentDelivery.count({ where: { webhookId } })) > 0);
    if (!known) throw notFound(`webhook ${webhookId} not found`);
    res.json(await attemptsPage(prisma, { webhookId }, req.query));
  });

  r.get("/webhooks/:webhookId", allowQuery(), async (req, res) => {
    const webhookId = String(req.params.webhookId);
    const attempts = UUID_RE.test(webhookId)
      ? await prisma.attempt.findMany({
          where: { webhookId },
          orderBy: { retryAttempt: "asc" },
          include: WITH_EVENT_BODY,
        })
      : [];
    const last = attempts.at(-1);
    if (!last) {
      // Not sent yet: its first send waits (or the delivery was closed before any send).
      const unsent = UUID_RE.test(webhookId)
        ? await prisma.unsentDelivery.findUnique({ where: { webhookId } })
        : null;
      if (!unsent) throw notFound(`webhook ${webhookId} not found`);
      res.json({ data: unsentDeliveryJson(unsent) });
      return;
    }
    res.json({
      data: {
        webhookID: webhookId,
        configID: last.configId,
        ...(last.workflowId ? { workflowID: last.workflowId } : {}),
        status: fromDbStatus(last.status),
        ...(last.status === "failed" && last.error ? { reason: last.error } : {}),
        attemptCount: attempts.length,
        lastStatusCode: last.statusCode,
        ...(last.nextRetryAfter ? { nextRetryAfter: last.nextRetryAfter.toISOString() } : {}),
        firstAttemptAt: attempts[0]!.createdAt.toISOString(),
        lastAttemptAt: last.createdAt.toISOString(),
        attempts: attempts.map(attemptJson),
      },
    });
  });

  r.post("/webhooks/:webhookId/replay", allowQuery(), async (req, res) => {
    const webhookId = String(req.params.webhookId);
    if (!UUID_RE.test(webhookId)) throw notFound(`webhook ${webhookId} not found`);
    const result = await replay(webhookId, req.get("idempotency-key"));
    res.status(result.created ? 202 : 200).json({ data: result });
  });

  r.post("/webhooks/:webhookId/cancel", allowQuery(), async (req, res) => {
    const webhookId = String(req.params.webhookId);
    if (!UUID_RE.test(webhookId)) throw notFound(`webhook ${webhookId} not found`);
    res.status(202).json({ data: await deliveries.cancel(webhookId) });
  });

  return r;
}
