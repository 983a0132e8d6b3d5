import { randomUUID } from "node:crypto";
import type { RequestHandler } from "express";
import type { Logger } from "../common/logger.js";
import type { BrokerPublisher } from "../core/broker/types.js";

/**
 * Publishes one event per API call to the audit topic, in the platform's event
 * message format: method, path (no query string, no bodies, so no secrets),
 * status, caller subject, the tenant a tenant-scoped token or portal session confined
 * the call to (null for deployment-wide callers), time and duration. A broker failure is logged and
 * never fails the call.
 */
export function auditTrail(publisher: BrokerPublisher, topic: string, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = Date.now();
    const id = randomUUID();
    res.on("finish", () => {
      const message = {
        idempotency_key: id,
        date: new Date(started).toISOString(),
        app: "webhooks",
        version: "v1",
        type: "API_CALL",
        payload: {
          method: req.method,
          path: req.path,
          status: res.statusCode,
          subject: (res.locals.subject as string | undefined) ?? null,
          tenant: (res.locals.tenant as { id: string } | undefined)?.id ?? null,
          durationMs: Date.now() - started,
        },
      };
      publisher.publish(topic, message).catch((err: Error) => {
        logger.error({ err: err.message, topic }, "audit event not published");
      });
    });
    next();
  };
}
