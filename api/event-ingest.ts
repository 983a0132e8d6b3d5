import express, { type RequestHandler } from "express";
import { parseEventMessage, UnparsableMessage } from "../core/event-message.js";
import { eventsIngested, workflowsStarted, workflowsStartedEagerly } from "../core/metrics.js";
import type { ProcessContext } from "../core/process-context.js";
import { MAX_EVENT_BYTES } from "../core/start-limits.js";
import { eventTrace, withEventSpan } from "../core/tracing.js";
import { startEventDeliveries } from "../workers/event-deliveries.js";
import { checkParsedBody, rawBody, verifyUtf8 } from "./body-checks.js";
import { ApiError, unavailable, validation } from "./errors.js";
import { tenantScopeOf } from "./tenant-scope.js";
import { jsonBody } from "./validation.js";

/** What the JSON parser of POST /events accepts: the event bound plus room for the envelope. */
const INGEST_LIMIT_BYTES = MAX_EVENT_BYTES + 16 * 1024;

/**
 * POST /events: the platform's event message over HTTP, for teams without a
 * broker. It takes the consumer's own path (parsing, matching, deterministic
 * workflow ids, bounds): a repeated idempotency key starts nothing new and
 * answers with the deliveries already started (200 instead of 202).
 */
export function eventIngest(ctx: ProcessContext): RequestHandler[] {
  const handler: RequestHandler = async (req, res) => {
    const data = Buffer.from(rawBody(req) ?? "", "utf8");
    let event: ReturnType<typeof parseEventMessage>;
    try {
      event = parseEventMessage(data);
    } catch (err) {
      if (!(err instanceof UnparsableMessage)) throw err;
      eventsIngested.inc({ result: "rejected" });
      throw validation(`not an event message: ${err.message}`);
    }
    // A tenant-scoped token sends its own tenant's events: another tenant is refused
    // with the words of a tenant that does not exist (no existence leak).
    const scope = tenantScopeOf(res);
    if (scope && event.tenant === undefined) event.tenant = scope.id;
    else if (scope && event.tenant !== scope.id && event.tenant !== scope.uid) {
      eventsIngested.inc({ result: "rejected" });
      throw validation(
        `tenant ${JSON.stringify(event.tenant!.slice(0, 200))} does not exist: the event names no tenant's id or uid`,
      );
    }
    const starts = await withEventSpan(
      ctx.tracing,
      "POST /events",
      { "webhooks.event_type": event.type, "webhooks.idempotency_key": event.idempotency_key },
      () => {
        // The event's own trace context first, else the HTTP caller's.
        const own = eventTrace(data);
        return own.traceparent
          ? own
          : { traceparent: req.get("traceparent"), tracestate: req.get("tracestate") };
      },
      () => startEventDeliveries(ctx, event, data),
    );
    const deliveries = starts.started.map((d) => ({
      configID: d.configId,
      webhookID: d.webhookId,
      workflowID: d.workflowId,
      started: d.started,
    }));
    workflowsStarted.inc(starts.started.filter((d) => d.started).length);
    workflowsStartedEagerly.inc(starts.started.filter((d) => d.eager).length);
    if (starts.failures.length) {
      eventsIngested.inc({ result: "failed" });
      const reasons = starts.failures
        .map((f) => (f.configId ? `config ${f.configId}: ${f.reason}` : f.reason))
        .join("; ");
      const done = `${deliveries.length} of ${deliveries.length + starts.failures.length} deliveries started`;
      if (starts.failures.some((f) => f.permanent === "event")) throw validation(reasons);
      if (starts.failures.some((f) => f.permanent))
        throw new ApiError(409, "CONFLICT", `${done}; cannot start: ${reasons}`);
      throw unavailable(`${done}; cannot start now: ${reasons}; send the same event again`);
    }
    eventsIngested.inc({ result: "accepted" });
    const created = deliveries.some((d) => d.started) || deliveries.length === 0;
    res.status(created ? 202 : 200).json({
      data: {
        type: event.type,
        configs: starts.configs,
        // Only when a filter held the event back: the answer stays as it was for configs without filters.
        ...(starts.filtered > 0 ? { filtered: starts.filtered } : {}),
        ...(starts.overBudget > 0 ? { overBudget: starts.overBudget } : {}),
        deliveries,
      },
    });
  };
  return [
    jsonBody({ required: true }),
    express.json({ limit: INGEST_LIMIT_BYTES, strict: false, type: "application/json", verify: verifyUtf8 }),
    checkParsedBody,
    handler,
  ];
}
