import type { Router } from "express";
import type pg from "pg";
import { findConfig } from "../core/config-rows.js";
import { orderingOf } from "../core/ordering.js";
import { findOrderingKey, listOrderingKeys, type OrderingKeyRow } from "../workers/ordering-keys.js";
import type { DeliveryControl } from "./delivery-control.js";
import { ApiError, notFound, validation } from "./errors.js";
import type { RouteAccess } from "./route-access.js";
import { cursorJson } from "./serialize.js";
import { allowQuery, UUID_RE } from "./validation.js";

// An ordered config's keys (docs/webhooks/ordering-and-batching.md#ordered-delivery): which are running or blocked, and
// the operator's skip of a blocked key's failed head. Tenant-scoped by api/tenant-scope.ts
// (every /configs/{id} path).

const keyJson = (k: OrderingKeyRow) => ({
  orderingKey: k.orderingKey,
  state: k.state,
  workflowId: k.workflowId,
  queued: k.queued,
  ...(k.headWebhookId ? { headWebhookID: k.headWebhookId } : {}),
  ...(k.reason ? { reason: k.reason } : {}),
  updatedAt: k.updatedAt.toISOString(),
});

export function orderingKeyRoutes(access: RouteAccess, pool: pg.Pool, deliveries: DeliveryControl): Router {
  const r = access.router();
  const orderedConfig = async (id: string) => {
    const config = UUID_RE.test(id) ? await findConfig(pool, id) : null;
    if (!config) throw notFound(`config ${id} not found`);
    return config;
  };

  r.get("/configs/:id/ordering-keys", allowQuery("state"), async (req, res) => {
    const state = req.query.state as string | undefined;
    if (state !== undefined && state !== "active" && state !== "blocked")
      throw validation(`state must be "active" or "blocked", got ${JSON.stringify(state.slice(0, 100))}`);
    const config = await orderedConfig(String(req.params.id));
    res.json(cursorJson((await listOrderingKeys(pool, config.id, state)).map(keyJson)));
  });

  r.post("/configs/:id/ordering-keys/:key/skip", allowQuery(), async (req, res) => {
    const config = await orderedConfig(String(req.params.id));
    const key = String(req.params.key);
    if (!orderingOf(config)) throw new ApiError(409, "CONFLICT", `config ${config.id} is not ordered`);
    const row = await findOrderingKey(pool, config.id, key);
    if (!row)
      throw notFound(
        `ordering key ${JSON.stringify(key.slice(0, 300))} of config ${config.id} not found (no event of it is queued)`,
      );
    if (row.state !== "blocked")
      throw new ApiError(409, "CONFLICT", `ordering key ${JSON.stringify(key.slice(0, 300))} is not blocked`);
    if (!(await deliveries.skipOrderingKeyHead(row.workflowId, row.headWebhookId)))
      throw new ApiError(
        409,
        "CONFLICT",
        `the workflow of ordering key ${JSON.stringify(key.slice(0, 300))} is gone`,
      );
    res.status(202).json({ data: { ...keyJson(row), skipRequested: true } });
  });
  return r;
}
