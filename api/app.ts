import express, { type Express } from "express";
import { type HealthCheck, healthHandler } from "../common/health.js";
import { VERSION } from "../common/version.js";

export interface AppDeps {
  checks: Record<string, HealthCheck>;
}

/** The HTTP application of `serve`: the configs API plus health and info. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.get("/_healthcheck", healthHandler(deps.checks));
  app.get("/_info", (_req, res) => {
    res.json({ version: VERSION });
  });
  return app;
}
