import type { Router } from "express";
import type { PrismaClient } from "../common/db/database.js";
import { endpointHealth } from "../workers/endpoint-health.js";
import { notFound } from "./errors.js";
import type { RouteAccess } from "./route-access.js";
import { allowQuery, UUID_RE } from "./validation.js";

/** GET /configs/{id}/stats: the endpoint's health over recent windows. */
export function endpointStatsRoutes(access: RouteAccess, prisma: PrismaClient): Router {
  const r = access.router();
  r.get("/configs/:id/stats", allowQuery(), async (req, res) => {
    const id = String(req.params.id);
    const config = UUID_RE.test(id) ? await prisma.config.findUnique({ where: { id } }) : null;
    if (!config) throw notFound(`config ${id} not found`);
    const health = await endpointHealth(prisma, id);
    res.json({
      data: {
        configID: id,
        active: config.active,
        ...(health.failingSince ? { failingSince: health.failingSince.toISOString() } : {}),
        ...(config.deactivatedReason !== null ? { deactivatedReason: config.deactivatedReason } : {}),
        windows: health.windows,
      },
    });
  });
  return r;
}
