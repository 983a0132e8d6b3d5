import type { Router } from "express";
import { notFound } from "./errors.js";
import { type Recoveries, recoveryJson } from "./recovery.js";
import type { RouteAccess } from "./route-access.js";
import { allowQuery, jsonBody, UUID_RE } from "./validation.js";

/** Bulk recovery of a config's failed deliveries, and its progress. */
export function recoveryRoutes(access: RouteAccess, recoveries: Recoveries): Router {
  const r = access.router();
  const configId = (id: string) => {
    if (!UUID_RE.test(id)) throw notFound(`config ${id} not found`);
    return id;
  };

  r.post("/configs/:id/recover", allowQuery(), jsonBody({ required: true }), async (req, res) => {
    const { recovery, created } = await recoveries.start(
      configId(String(req.params.id)),
      req.body,
      req.get("idempotency-key"),
    );
    res.status(created ? 202 : 200).json({ data: recoveryJson(recovery) });
  });

  r.get("/configs/:id/recoveries", allowQuery(), async (req, res) => {
    const list = await recoveries.list(configId(String(req.params.id)));
    res.json({ data: list.map(recoveryJson) });
  });

  r.get("/configs/:id/recoveries/:recoveryId", allowQuery(), async (req, res) => {
    const id = configId(String(req.params.id));
    const recoveryId = String(req.params.recoveryId);
    if (!UUID_RE.test(recoveryId)) throw notFound(`recovery ${recoveryId} of config ${id} not found`);
    res.json({ data: recoveryJson(await recoveries.get(id, recoveryId)) });
  });

  return r;
}
