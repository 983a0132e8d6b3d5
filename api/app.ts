import express, { type Express } from "express";
import type { PrismaClient } from "../common/db/database.js";
import { type HealthCheck, healthHandler } from "../common/health.js";
import type { Logger } from "../common/logger.js";
import { VERSION } from "../common/version.js";
import { configRoutes } from "./config-routes.js";
import { deliveryRoutes } from "./delivery-routes.js";
import { errorHandler, unknownRoute } from "./errors.js";
import { openapi } from "./openapi.js";

/** Largest request body accepted (a config is a few hundred bytes). */
export const MAX_BODY_BYTES = 64 * 1024;

export interface AppDeps {
  prisma: PrismaClient;
  logger: Logger;
  checks: Record<string, HealthCheck>;
}

/** The HTTP application of `serve`: the configs API plus health, info and the OpenAPI document. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  app.get("/_healthcheck", healthHandler(deps.checks));
  app.get("/_info", (_req, res) => {
    res.json({ version: VERSION });
  });
  app.get("/openapi.json", (_req, res) => {
    res.json(openapi);
  });
  app.use(express.json({ limit: MAX_BODY_BYTES, strict: false, type: "application/json" }));
  app.use(configRoutes(deps.prisma));
  app.use(deliveryRoutes(deps.prisma));
  app.use(unknownRoute);
  app.use(errorHandler(deps.logger));
  return app;
}
