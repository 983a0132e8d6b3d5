import { EXCERPT_BODY_BYTES, KEPT_RESPONSE_HEADERS } from "../activities/attempt-exchange.js";
import { VERSION } from "../common/version.js";
import { MAX_BATCH_EVENTS, MAX_BATCH_WAIT_MS } from "../core/batching.js";
import { SIGNATURE_HEADER_STYLES } from "../core/options.js";
import { DELIVERY_STATUSES } from "./delivery-statuses.js";
import { DESTINATION, DESTINATION_INPUT } from "./openapi-destination.js";
import { endpointAuthSchemas } from "./openapi-endpoint-auth.js";
import { portalPaths, portalSchemas, portalSecurityScheme } from "./openapi-portal.js";

// The configs API as one OpenAPI 3.1 document: served at /openapi.json and
// compiled by ajv (JSON Schema 2020-12) to validate every request, so the
// published contract and the checks cannot drift apart.

const EVENT_TYPE = {
  type: "string",
  minLength: 1,
  maxLength: 255,
  pattern: "^\\s*[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*\\.([A-Za-z0-9_-]+|\\*)\\s*$",
  description: "an event type <app>.<type> (stored lower-cased) or a wildcard such as ledger.*",
} as const;

const SECRET = {
  type: "string",
  pattern: "^[A-Za-z0-9+/]{32}$",
  description: "standard base64 of exactly 24 bytes (32 characters)",
} as const;

const TIME = { type: "string", format: "date-time" } as const;
const UUID = { type: "string", format: "uuid" } as const;

/** A config's ordered delivery settings (docs/webhooks/ordering-and-batching.md#ordered-delivery). */
const ORDERING = {
  type: "object",
  required: ["enabled"],
  additionalProperties: false,
  properties: {
    enabled: {
      type: "boolean",
      description:
        "deliver the events of one ordering key (the event's ordering_key, else the config id) one at a time, in the order they were accepted",
    },
    onFailure: {
      type: "string",
      enum: ["skip", "block"],
      description:
        "what a head that failed for good does: skip (default) closes it failed and goes on; block holds its key until POST /configs/{id}/ordering-keys/{key}/skip, a replay or a cancel of the head (a batched config: the head is a batch, and a replay of any of its events releases the key)",
    },
  },
} as const;
/** A config's batched delivery settings (docs/webhooks/ordering-and-batching.md#batched-delivery). */
const BATCH = {
  type: "object",
  required: ["maxEvents", "maxWaitMs"],
  additionalProperties: false,
  properties: {
    maxEvents: {
      type: "integer",
      minimum: 2,
      maximum: MAX_BATCH_EVENTS,
      description: `most events in one POST (their webhook ids share one header, hence at most ${MAX_BATCH_EVENTS})`,
    },
    maxWaitMs: {
      type: "integer",
      minimum: 1,
      maximum: MAX_BATCH_WAIT_MS,
      description: "longest the first event of a batch waits for more before the batch goes (milliseconds)",
    },
  },
} as const;
/** Names of a config's signing headers (docs/webhooks/security.md#verifying-with-a-standard-webhooks-library). */
const SIGNATURE_HEADERS = {
  type: "string",
  enum: SIGNATURE_HEADER_STYLES,
  description:
    "the names the signature travels under: svc (svc-webhook-id, svc-webhook-timestamp, svc-webhook-signature) or " +
    "standard (webhook-id, webhook-timestamp, webhook-signature: Standard Webhooks libraries verify deliveries " +
    "unchanged, with the config's secret as it is). The signature, the other headers (svc-webhook-test, " +
    "svc-webhook-idempotency-key, svc-webhook-batch-ids) and the body are the same in both",
} as const;
/** A config's cap on its sends in flight (activities/send-slots.ts). */
const MAX_CONCURRENCY = {
  type: "integer",
  minimum: 1,
  maximum: 10_000,
  description:
    "most sends of this config in flight at once, across every worker process (a POST counts from its claim " +
    "to its attempt row); a send past it waits and tries again, shown as the delivery's wait " +
    '("waiting for a send slot")',
} as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ "application/json": { schema } });
const ok = (description: string, schema: object) => ({ description, content: json(schema) });
const error = (description: string) => ({ description, content: json(ref("Error")) });
const idParam = (name = "id", what = "config") => ({
  name,
  in: "path",
  required: true,
  description: `${what} id`,
  schema: UUID,
});
const tenantParam = {
  name: "tenant",
  in: "path",
  required: true,
  description: "the tenant's id, or uid:<uid>",
  schema: { type: "string" },
};
const pageParams = [
  {
    name: "pageSize",
    in: "query",
    description: "items per page (1–1000); without it every item is returned",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  {
    name: "cursor",
    in: "query",
    description: "the `next` value of the previous page",
    schema: { type: "string" },
  },
];
const errors = {
  400: error("invalid request: the message names the field"),
  401: error("missing or invalid bearer token (when authentication is on)"),
  403: error(
    "the token lacks the scope, or a tenant-scoped token called a route spanning tenants (or names a tenant that does not exist)",
  ),
  500: error("internal error"),
  503: error("a dependency (database, Temporal) did not answer in time; the message names it"),
};

export const openapi = {
  openapi: "3.1.0",
  info: {
    title: "Webhooks configs API",
    version: VERSION,
    description:
      "Manage webhook configs (subscriptions of endpoints to event types), inspect deliveries and their attempts.",
  },
  components: {
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
      ...portalSecurityScheme,
    },
    schemas: {
      ConfigUser: {
        type: "object",
        description: "A config as the caller sends it (create and update).",
        required: ["eventTypes"],
        additionalProperties: false,
        properties: {
          endpoint: {
            type: "string",
            maxLength: 2048,
            description:
              "absolute http(s) URL the events are POSTed to; required unless destination is kafka, nats, amqp or sqs (then derived from it)",
          },
          destination: DESTINATION_INPUT,
          eventTypes: { type: "array", minItems: 1, maxItems: 100, items: EVENT_TYPE },
          secret: {
            ...SECRET,
            description: `${SECRET.description}; generated when absent (on update by a portal session without the "secrets" feature: absent keeps the stored one, given is 403)`,
          },
          name: { type: "string", maxLength: 255 },
          tenantId: {
            ...UUID,
            description:
              "the tenant owning the config (create only: a config never changes tenant; on update it must be the current one or absent); the default tenant when absent, or the token's tenant with a tenant-scoped token",
          },
          filter: {
            type: ["object", "null"],
            description:
              "payload filter with MongoDB-style operators, tested on the event message endpoints receive (type, payload, ...): " +
              '{"payload.amount": {"$gte": 100}, "payload.currency": {"$in": ["EUR", "USD"]}}; ' +
              "operators $eq $ne $gt $gte $lt $lte $in $nin $all $size $exists $regex (RE2, $options i m s) $not $elemMatch $and $or $nor; " +
              "at most 16 KiB as JSON, 10 $regex of at most 256 characters, counted repetitions up to {100} and 1 000 RE2 instructions each, lists ($in $nin $all) of at most 256 values; " +
              "evaluated under a step budget per event (over it, the event counts as filtered); null removes it; on update, absent keeps the current filter",
          },
          auth: {
            ...ref("EndpointAuthChange"),
            description:
              "endpoint auth and custom headers, merged into the stored ones; on update, absent keeps them, except that an " +
              "endpoint moving to another origin (scheme, host, port) must give every stored credential again in the same " +
              "request (header values, basic.password, bearer.token, oauth2.clientSecret) or remove its kind with null: 400 naming the field",
          },
          ordering: {
            ...ORDERING,
            type: ["object", "null"],
            description:
              "ordered delivery per ordering key (docs/webhooks/ordering-and-batching.md#ordered-delivery); null turns it off; on update, absent keeps the current setting",
          },
          batch: {
            ...BATCH,
            type: ["object", "null"],
            description:
              "send up to maxEvents events in one POST as a JSON array (docs/webhooks/ordering-and-batching.md#batched-delivery); an ordered config sends the events of each ordering key in batches, one after the other; null turns it off; on update, absent keeps the current setting",
          },
          signatureHeaders: {
            ...SIGNATURE_HEADERS,
            type: ["string", "null"],
            enum: [...SIGNATURE_HEADER_STYLES, null],
            description: `${SIGNATURE_HEADERS.description}; null or absent on create: the deployment's default (--signature-headers, svc unless set); on update, null returns to that default and absent keeps the current setting`,
          },
          maxConcurrency: {
            ...MAX_CONCURRENCY,
            type: ["integer", "null"],
            description: `${MAX_CONCURRENCY.description}; null or absent on create: no cap; on update, null removes the cap and absent keeps it`,
          },
        },
      },
      OrderingKey: {
        type: "object",
        required: ["orderingKey", "state", "workflowId", "queued", "updatedAt"],
        properties: {
          orderingKey: { type: "string" },
          state: { type: "string", enum: ["active", "blocked"] },
          workflowId: { type: "string", description: "the key's sequencer workflow (Temporal Web UI)" },
          queued: {
            type: "integer",
            minimum: 0,
            description: "deliveries of the key whose turn has not ended (the head included)",
          },
          headWebhookID: { ...UUID, description: "the delivery holding the key, when blocked" },
          reason: { type: "string", description: "why the head failed, when blocked" },
          updatedAt: { type: "string", format: "date-time" },
        },
      },
      SecretChange: {
        type: "object",
        additionalProperties: false,
        properties: {
          secret: { ...SECRET, description: `${SECRET.description}; generated when absent` },
          overlap: {
            type: "string",
            pattern: "^([0-9]+(\\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$",
            description:
              "how long the previous secret keeps signing alongside the new one (Go duration, at most 720h); immediate rotation when absent",
          },
        },
      },
      Config: {
        type: "object",
        required: ["id", "name", "endpoint", "eventTypes", "secret", "active", "createdAt", "updatedAt"],
        properties: {
          id: UUID,
          name: { type: "string" },
          endpoint: {
            type: "string",
            description:
              "the URL POSTed to; for a kafka, nats, amqp or sqs destination, derived from it: kafka://<first broker>/<topic>, nats://<first server>/<subject>, amqp://<host:port>/<vhost>?exchange=...&routingKey=..., sqs+<queue URL>",
          },
          destination: DESTINATION,
          eventTypes: { type: "array", items: { type: "string" } },
          secret: {
            type: "string",
            description:
              'the secret in clear only in the answers of create and secret change; "********" in every other answer (GET /configs/{id}/secret reads it)',
          },
          previousSecretExpiresAt: {
            ...TIME,
            description: "present while the rotated-out secret still signs deliveries",
          },
          auth: {
            ...ref("EndpointAuth"),
            description:
              "present when the config has endpoint auth or headers (answers for one config; lists leave it out)",
          },
          active: { type: "boolean" },
          tenantId: {
            ...UUID,
            description: "the tenant owning the config (the default tenant: the nil UUID)",
          },
          filter: {
            type: "object",
            description:
              "the payload filter an event must pass besides its type; absent when the config has none",
          },
          ordering: {
            ...ORDERING,
            description: "present when the config delivers in order; onFailure is always shown",
          },
          batch: { ...BATCH, description: "present when the config batches its deliveries" },
          signatureHeaders: {
            ...SIGNATURE_HEADERS,
            description: `${SIGNATURE_HEADERS.description}; present when the config sets it, absent when its deliveries follow the deployment's default (--signature-headers)`,
          },
          maxConcurrency: {
            ...MAX_CONCURRENCY,
            description: `${MAX_CONCURRENCY.description}; absent: no cap`,
          },
          deactivatedReason: {
            type: "string",
            description:
              "set when the config was deactivated automatically (--auto-deactivate-after); cleared by activate",
          },
          deactivatedAt: TIME,
          createdAt: TIME,
          updatedAt: TIME,
        },
      },
      ...endpointAuthSchemas,
      ...portalSchemas,
      ConfigSecret: {
        type: "object",
        required: ["secret"],
        properties: {
          secret: SECRET,
          previousSecretExpiresAt: {
            ...TIME,
            description: "present while the rotated-out secret still signs deliveries",
          },
        },
      },
      Attempt: {
        type: "object",
        required: [
          "id",
          "webhookID",
          "config",
          "payload",
          "statusCode",
          "retryAttempt",
          "status",
          "createdAt",
          "updatedAt",
        ],
        properties: {
          id: UUID,
          webhookID: UUID,
          config: { type: "object", description: "snapshot of the config at send time, without its secret" },
          payload: { type: "string", description: "the body that was sent" },
          statusCode: { type: "integer", description: "HTTP status; 0 when no answer came" },
          retryAttempt: { type: "integer" },
          durationMs: {
            type: "integer",
            description: "how long the send took; absent when there was no send or for old rows",
          },
          status: { enum: ["success", "to retry", "retrying", "failed"] },
          nextRetryAfter: { ...TIME, description: "when the next try happens (status `to retry`)" },
          error: { type: "string", description: "transport error, or why the delivery ended" },
          replayOf: { ...UUID, description: "the webhook this delivery replays" },
          batchID: {
            ...UUID,
            description:
              "the batch this attempt was sent in (its POST's svc-webhook-id, docs/webhooks/ordering-and-batching.md#batched-delivery); absent when sent alone; payload is then this event's element of the array",
          },
          requestHeaders: {
            type: "object",
            additionalProperties: { type: "string" },
            description:
              "the headers of the POST as sent (its last redirect hop): the signing headers whole, the values of custom headers and Authorization masked; absent when nothing was sent and for attempts recorded before this field",
          },
          response: ref("AttemptResponse"),
          createdAt: TIME,
          updatedAt: TIME,
        },
      },
      AttemptResponse: {
        type: "object",
        description:
          "An excerpt of the endpoint's answer, kept with the attempt (and removed with it); absent when no answer came",
        required: ["headers", "body", "truncated"],
        properties: {
          headers: {
            type: "object",
            additionalProperties: { type: "string" },
            description: `the answer's ${KEPT_RESPONSE_HEADERS.join(", ")} when present, each at most 256 characters`,
          },
          body: {
            type: "string",
            description: `the body's first ${EXCERPT_BODY_BYTES} bytes as UTF-8 text, the endpoint's own credentials masked; for tenant-scoped callers address literals are withheld`,
          },
          truncated: { type: "boolean", description: "the body was longer than the excerpt" },
        },
      },
      ConfigTestRequest: {
        type: "object",
        additionalProperties: false,
        properties: {
          eventType: {
            type: "string",
            minLength: 1,
            maxLength: 255,
            description:
              'a catalog event type whose `example` is sent as the test event\'s payload, under its type; absent: `webhooks.test` with `{"data":"test"}`',
          },
        },
      },
      Delivery: {
        type: "object",
        description:
          "One event delivered to one config: the aggregate of its attempts. `waiting`: its first send waits for the rate limit service (no attempt yet; `reason` says why, `nextRetryAfter` until when).",
        required: ["webhookID", "configID", "status", "attemptCount", "attempts"],
        properties: {
          webhookID: UUID,
          configID: UUID,
          status: { enum: [...DELIVERY_STATUSES] },
          workflowID: { type: "string", description: "its Temporal workflow (absent for test deliveries)" },
          reason: { type: "string", description: "why it failed, when it did, or why it waits" },
          acceptedAt: {
            ...TIME,
            description: "when it started, for a delivery not sent yet (its caps count from here)",
          },
          attemptCount: { type: "integer" },
          lastStatusCode: { type: "integer" },
          nextRetryAfter: TIME,
          firstAttemptAt: TIME,
          lastAttemptAt: TIME,
          attempts: { type: "array", items: ref("Attempt") },
        },
      },
      DeliverySummary: {
        type: "object",
        description:
          "One delivery of GET /configs/{id}/deliveries: the Delivery of GET /webhooks/{webhookId} without its attempts, plus its event type.",
        required: ["webhookID", "configID", "status", "attemptCount"],
        properties: {
          webhookID: UUID,
          configID: UUID,
          status: { enum: [...DELIVERY_STATUSES] },
          eventType: {
            type: "string",
            description: "the event's type (absent when the stored body has none)",
          },
          attemptCount: { type: "integer" },
          lastStatusCode: {
            type: "integer",
            description: "HTTP status of the last attempt; 0 when no answer came",
          },
          firstAttemptAt: TIME,
          lastAttemptAt: TIME,
          acceptedAt: { ...TIME, description: "when it started, for a delivery not sent yet" },
          nextRetryAfter: { ...TIME, description: "the next try (status `to retry` or `waiting`)" },
          reason: { type: "string", description: "why it failed, when it did, or why it waits" },
          replayOf: { ...UUID, description: "the webhook this delivery replays" },
          workflowID: { type: "string", description: "its Temporal workflow (absent for test deliveries)" },
        },
      },
      Replay: {
        type: "object",
        required: ["webhookID", "replayOf", "workflowID", "created"],
        properties: {
          webhookID: { ...UUID, description: "the new delivery" },
          replayOf: UUID,
          workflowID: { type: "string", description: "its Temporal workflow" },
          created: { type: "boolean" },
        },
      },
      Cancellation: {
        type: "object",
        required: ["webhookID", "workflowID", "cancelRequested"],
        properties: {
          webhookID: UUID,
          workflowID: { type: "string" },
          cancelRequested: { type: "boolean" },
        },
      },
      DeadLetter: {
        type: "object",
        description:
          "A broker message whose deliveries could not start: kept with its reason until replayed or deleted.",
        required: [
          "id",
          "topic",
          "position",
          "kind",
          "reason",
          "deliveryCount",
          "status",
          "replayAttempts",
          "messageBytes",
          "createdAt",
          "updatedAt",
        ],
        properties: {
          id: UUID,
          topic: { type: "string" },
          position: {
            type: "string",
            description:
              "where the broker holds it: nats:<stream>:<sequence> or kafka:<topic>:<partition>:<offset>",
          },
          eventType: { type: "string", description: "the normalised event type" },
          configID: {
            ...UUID,
            description: "the config whose start failed; absent when the whole message failed",
          },
          tenantID: {
            ...UUID,
            description:
              "the event's tenant (or its config's); absent when the message did not parse or named a tenant that does not exist",
          },
          kind: {
            enum: ["permanent", "exhausted"],
            description:
              "permanent: retrying cannot help (event over a bound, config row unusable, start refused by Temporal); exhausted: failures that may pass outlasted --broker-max-deliveries",
          },
          reason: { type: "string" },
          deliveryCount: { type: "integer", description: "deliveries of the message by the broker" },
          status: { enum: ["pending", "replayed"] },
          replayAttempts: { type: "integer" },
          lastReplayError: { type: "string", description: "why the last replay did not start everything" },
          replayedAt: TIME,
          messageBytes: { type: "integer" },
          message: { type: "string", description: "the message as consumed (GET of one dead letter)" },
          messageBase64: { type: "string", description: "instead of message when it is not UTF-8" },
          messagePreview: { type: "string", description: "its first 200 characters (lists)" },
          messagePreviewBase64: { type: "string" },
          createdAt: TIME,
          updatedAt: TIME,
        },
      },
      StartedDelivery: {
        type: "object",
        description: "A delivery an event (ingested or replayed) asked for",
        required: ["configID", "webhookID", "workflowID", "started"],
        properties: {
          configID: UUID,
          webhookID: UUID,
          workflowID: { type: "string" },
          started: {
            type: "boolean",
            description: "false when this delivery had started before (it is not started twice)",
          },
        },
      },
      EndpointStats: {
        type: "object",
        required: ["configID", "active", "windows"],
        properties: {
          configID: UUID,
          active: { type: "boolean" },
          failingSince: {
            ...TIME,
            description: "the first send of the current failing streak (no 2xx since, nor since activation)",
          },
          deactivatedReason: { type: "string", description: "why it was deactivated automatically" },
          windows: {
            type: "array",
            items: {
              type: "object",
              required: ["window", "attempts", "succeeded", "failed", "successRate", "latencyMs"],
              properties: {
                window: { enum: ["5m", "1h", "24h"] },
                attempts: { type: "integer", description: "sends in the window (test deliveries included)" },
                succeeded: { type: "integer", description: "sends answered 2xx" },
                failed: { type: "integer" },
                successRate: {
                  type: ["number", "null"],
                  description: "succeeded / attempts; null without sends",
                },
                latencyMs: {
                  type: ["object", "null"],
                  description: "send durations; null without timed sends",
                  properties: {
                    p50: { type: "integer" },
                    p90: { type: "integer" },
                    p99: { type: "integer" },
                  },
                },
              },
            },
          },
        },
      },
      RecoveryRequest: {
        type: "object",
        description:
          "Which failed deliveries of the config to replay: those that ended failed in [since, until), optionally only of these event types",
        required: ["since"],
        additionalProperties: false,
        properties: {
          since: { type: "string", description: "RFC 3339 time: deliveries that ended failed from then" },
          until: {
            type: "string",
            description: "RFC 3339 time, later than since; the request's time when absent",
          },
          eventTypes: {
            type: "array",
            maxItems: 100,
            items: {
              type: "string",
              minLength: 1,
              maxLength: 255,
              pattern: "^\\s*[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*\\s*$",
              description: "an event type such as ledger.committed_transactions (no wildcard)",
            },
          },
        },
      },
      Recovery: {
        type: "object",
        required: ["id", "configID", "since", "until", "eventTypes", "state", "matched", "started"],
        properties: {
          id: UUID,
          configID: UUID,
          since: TIME,
          until: TIME,
          eventTypes: { type: "array", items: { type: "string" } },
          state: { enum: ["running", "done", "failed"] },
          matched: { type: "integer", description: "failed deliveries found in the window so far" },
          started: { type: "integer", description: "replays this recovery started" },
          alreadyStarted: {
            type: "integer",
            description: "replays this idempotency key had started before (not started twice)",
          },
          failedToStart: {
            type: "integer",
            description: "deliveries whose replay could not start (see lastError)",
          },
          lastError: { type: "string" },
          workflowID: { type: "string", description: "the recoverDeliveries workflow doing the work" },
          createdAt: TIME,
          updatedAt: TIME,
          finishedAt: TIME,
        },
      },
      DeadLetterReplay: {
        type: "object",
        required: ["deadLetter", "deliveries"],
        properties: {
          deadLetter: ref("DeadLetter"),
          deliveries: { type: "array", items: ref("StartedDelivery") },
        },
      },
      EventMessage: {
        type: "object",
        description:
          "The platform's event message, as on the broker; the type becomes lower(app).lower(type); other fields are dropped",
        required: ["type"],
        properties: {
          idempotency_key: { type: "string", description: "repeat it and nothing new starts" },
          date: { type: "string" },
          app: { type: "string" },
          version: { type: "string" },
          type: { type: "string" },
          payload: { description: "any JSON, at most 128 levels deep and 2 MiB in all (the event as JSON)" },
          tenant: {
            type: "string",
            minLength: 1,
            description:
              "the tenant the event is for, by id or uid: it matches only that tenant's configs (without it, the default tenant's); a tenant that does not exist refuses the event (400); not part of the body sent",
          },
          ordering_key: {
            type: "string",
            minLength: 1,
            maxLength: 256,
            description:
              "an ordered config delivers the events of one ordering key one at a time, in the order they were accepted (without it, the config id is the key); part of the body sent",
          },
        },
      },
      TenantUser: {
        type: "object",
        description:
          "A tenant as the caller sends it: create (uid required) and PATCH (every field optional).",
        additionalProperties: false,
        properties: {
          uid: {
            type: "string",
            minLength: 1,
            maxLength: 128,
            pattern: "^[A-Za-z0-9][A-Za-z0-9._~-]*$",
            not: { pattern: "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$" },
            description:
              "the caller's own id of its customer, unique: letters, digits, . _ ~ -, starting with a letter or digit, at most 128 characters, never UUID-shaped (events and tokens name a tenant by id or uid)",
          },
          name: { type: "string", maxLength: 255 },
          metadata: {
            type: "object",
            description: "free JSON object, at most 4 KiB as JSON; PATCH replaces it whole",
          },
        },
      },
      Tenant: {
        type: "object",
        required: ["id", "uid", "name", "createdAt", "updatedAt"],
        properties: {
          id: {
            ...UUID,
            description: "the default tenant's is the nil UUID 00000000-0000-0000-0000-000000000000",
          },
          uid: { type: "string", description: 'the default tenant\'s is "default"' },
          name: { type: "string" },
          metadata: {
            type: "object",
            description: "the operator's labels and references; absent in the answers to a portal session",
          },
          createdAt: TIME,
          updatedAt: TIME,
        },
      },
      Ingested: {
        type: "object",
        required: ["type", "configs", "deliveries"],
        properties: {
          type: { type: "string", description: "the normalised event type" },
          configs: { type: "integer", description: "active configs it matched (type and payload filter)" },
          filtered: {
            type: "integer",
            description:
              "active configs whose types it matched but whose payload filter it did not pass; absent when none",
          },
          overBudget: {
            type: "integer",
            description:
              "of filtered, the configs whose filter was stopped by its step budget (counted as not passed: docs/webhooks/security.md, payload filter bounds); absent when none",
          },
          deliveries: { type: "array", items: ref("StartedDelivery") },
        },
      },
      EventTypeUser: {
        type: "object",
        description:
          "An event type as the caller sends it (PUT creates or replaces it: an omitted field takes its default)",
        additionalProperties: false,
        properties: {
          description: {
            type: "string",
            maxLength: 1000,
            description: 'what the event means; "" when absent',
          },
          schema: {
            type: ["object", "boolean"],
            description:
              "JSON Schema (2020-12) of the payload, at most 128 KiB and 64 levels deep; checked when written (400 naming what is wrong). Patterns run on RE2 (no look-arounds or backreferences); no remote $ref. Absent: any payload",
          },
          example: { description: "an example payload (at most 64 KiB), checked against the schema" },
          deprecated: {
            type: "boolean",
            description:
              "still delivered; subscribing to it warns and its events are counted (webhooks_deprecated_events_total); false when absent",
          },
        },
      },
      EventType: {
        type: "object",
        required: ["name", "description", "deprecated", "version", "createdAt", "updatedAt"],
        properties: {
          name: { type: "string", description: "the normalised event type, <app>.<type> in lower case" },
          description: { type: "string" },
          schema: { type: ["object", "boolean"], description: "the payload's JSON Schema, as written" },
          example: { description: "an example payload" },
          deprecated: { type: "boolean" },
          version: {
            type: "integer",
            description: "increases on every write of the type; schemas are compiled once per version",
          },
          createdAt: TIME,
          updatedAt: TIME,
        },
      },
      ConfigWritten: {
        type: "object",
        description:
          "The config as written, and when the event catalog is not empty, warnings about subscriptions it does not list",
        required: ["data"],
        properties: {
          data: ref("Config"),
          warnings: {
            type: "array",
            items: { type: "string" },
            description:
              "present only when there is one: a subscribed type not in the event catalog, a wildcard matching none of its types, a deprecated type",
          },
        },
      },
      ConfigCursor: cursorOf("Config"),
      TenantCursor: cursorOf("Tenant"),
      EventTypeCursor: cursorOf("EventType"),
      AttemptCursor: cursorOf("Attempt"),
      DeliverySummaryCursor: cursorOf("DeliverySummary"),
      DeadLetterCursor: cursorOf("DeadLetter"),
      PortalSessionCursor: cursorOf("PortalSession"),
      Error: {
        type: "object",
        required: ["errorCode", "errorMessage"],
        properties: {
          errorCode: {
            enum: [
              "VALIDATION",
              "NOT_FOUND",
              "UNAUTHORIZED",
              "SESSION_EXPIRED",
              "SESSION_REVOKED",
              "FORBIDDEN",
              "CONFLICT",
              "UNAVAILABLE",
              "RATE_LIMITED",
              "INTERNAL",
            ],
          },
          errorMessage: { type: "string" },
        },
      },
    },
  },
  security: [{ bearer: [] }, { portalSession: [] }],
  paths: {
    "/configs": {
      get: {
        operationId: "listConfigs",
        summary: "List configs, newest update first",
        parameters: [
          { name: "id", in: "query", schema: UUID, description: "only the config with this id" },
          {
            name: "endpoint",
            in: "query",
            schema: { type: "string" },
            description: "only configs with this endpoint",
          },
          ...pageParams,
        ],
        responses: { 200: ok("the configs", ref("ConfigCursor")), ...errors },
      },
      post: {
        operationId: "createConfig",
        summary: "Create a config (active)",
        requestBody: { required: true, content: json(ref("ConfigUser")) },
        responses: {
          200: ok("the created config, with its secret in clear", ref("ConfigWritten")),
          429: error("the tenant holds its quota of configs (--tenant-max-configs); Retry-After is a hint"),
          ...errors,
        },
      },
    },
    "/configs/{id}": {
      parameters: [idParam()],
      get: {
        operationId: "getConfig",
        summary: "Get one config",
        responses: { 200: ok("the config", dataOf("Config")), 404: error("no such config"), ...errors },
      },
      put: {
        operationId: "updateConfig",
        summary:
          "Replace a config's endpoint, event types, name and secret (a new secret when absent; the answer masks it, GET /configs/{id}/secret reads it). " +
          "Stored credentials stay bound to the endpoint's origin: a new origin needs them again in auth (400 naming the field otherwise); " +
          "credentials never go over plain http:// except to loopback while the egress policy allows it",
        requestBody: { required: true, content: json(ref("ConfigUser")) },
        responses: {
          200: ok("the updated config", ref("ConfigWritten")),
          404: error("no such config"),
          ...errors,
          403: error(
            `${errors[403].description}; or a portal session without the "secrets" feature gave a secret (absent keeps the stored one)`,
          ),
        },
      },
      delete: {
        operationId: "deleteConfig",
        summary: "Delete a config; its pending deliveries end failed without another send",
        responses: { 200: { description: "deleted" }, 404: error("no such config"), ...errors },
      },
    },
    "/configs/{id}/activate": {
      parameters: [idParam()],
      put: {
        operationId: "activateConfig",
        summary: "Activate a config",
        responses: { 200: ok("the config", dataOf("Config")), 404: error("no such config"), ...errors },
      },
    },
    "/configs/{id}/deactivate": {
      parameters: [idParam()],
      put: {
        operationId: "deactivateConfig",
        summary: "Deactivate a config; its pending deliveries end failed without another send",
        responses: { 200: ok("the config", dataOf("Config")), 404: error("no such config"), ...errors },
      },
    },
    "/configs/{id}/stats": {
      parameters: [idParam()],
      get: {
        operationId: "getConfigStats",
        summary:
          "The endpoint's health: success rate and send latency over the last 5 minutes, hour and day, and since when it has been failing",
        responses: {
          200: ok("the endpoint's health", dataOf("EndpointStats")),
          404: error("no such config"),
          ...errors,
        },
      },
    },
    "/configs/{id}/ordering-keys": {
      parameters: [
        idParam(),
        {
          name: "state",
          in: "query",
          required: false,
          schema: { type: "string", enum: ["active", "blocked"] },
          description: "only keys in this state; all running keys when absent",
        },
      ],
      get: {
        operationId: "listOrderingKeys",
        summary:
          "An ordered config's ordering keys whose workflow runs: active (delivering or waiting), or blocked by a head that failed for good",
        responses: {
          200: ok("the keys (at most 1 000), by key", {
            type: "object",
            properties: {
              cursor: {
                type: "object",
                properties: {
                  hasMore: { type: "boolean" },
                  data: { type: "array", items: ref("OrderingKey") },
                },
              },
            },
          }),
          404: error("no such config"),
          ...errors,
        },
      },
    },
    "/configs/{id}/ordering-keys/{key}/skip": {
      parameters: [
        idParam(),
        {
          name: "key",
          in: "path",
          required: true,
          schema: { type: "string" },
          description: "the ordering key",
        },
      ],
      post: {
        operationId: "skipOrderingKeyHead",
        summary:
          "Release a blocked ordering key: its failed head stays failed, the next queued event goes (replaying the head releases it too, with the replay first); for a batched config the head is the failed batch, released whole",
        responses: {
          202: ok("the key, its release requested", {
            type: "object",
            properties: { data: ref("OrderingKey") },
          }),
          404: error("no such config or ordering key"),
          409: error("the config is not ordered, the key is not blocked, or its workflow is gone"),
          ...errors,
        },
      },
    },
    "/configs/{id}/recover": {
      parameters: [
        idParam(),
        {
          name: "Idempotency-Key",
          in: "header",
          required: true,
          description: "the same key answers the same recovery and never replays a delivery twice",
          schema: { type: "string", maxLength: 255 },
        },
      ],
      post: {
        operationId: "recoverConfigDeliveries",
        summary:
          "Replay every delivery of the config that ended failed in a time window (optionally of some event types), in the background at --recovery-rate",
        requestBody: { required: true, content: json(ref("RecoveryRequest")) },
        responses: {
          202: ok("recovery started; follow it at /configs/{id}/recoveries/{recoveryId}", dataOf("Recovery")),
          200: ok("this key asked for the same recovery before: nothing new started", dataOf("Recovery")),
          404: error("no such config"),
          409: error("the config is inactive, or the key was used with another window or event types"),
          429: error("the tenant has its quota of running recoveries (--tenant-max-recoveries)"),
          ...errors,
        },
      },
    },
    "/configs/{id}/recoveries": {
      parameters: [idParam()],
      get: {
        operationId: "listConfigRecoveries",
        summary: "The config's recoveries, newest first (at most 100)",
        responses: {
          200: ok("recoveries", {
            type: "object",
            properties: { data: { type: "array", items: ref("Recovery") } },
          }),
          404: error("no such config"),
          ...errors,
        },
      },
    },
    "/configs/{id}/recoveries/{recoveryId}": {
      parameters: [idParam(), idParam("recoveryId", "recovery")],
      get: {
        operationId: "getConfigRecovery",
        summary: "A recovery's progress",
        responses: { 200: ok("the recovery", dataOf("Recovery")), 404: error("no such recovery"), ...errors },
      },
    },
    "/configs/{id}/secret": {
      parameters: [idParam()],
      get: {
        operationId: "getConfigSecret",
        summary:
          "The config's current signing secret in clear (needs the write scope: holding it is the power to sign deliveries)",
        responses: { 200: ok("the secret", dataOf("ConfigSecret")), 404: error("no such config"), ...errors },
      },
    },
    "/configs/{id}/auth": {
      parameters: [idParam()],
      get: {
        operationId: "getConfigAuth",
        summary: "The config's endpoint auth and custom headers, credentials masked",
        responses: { 200: ok("the auth", dataOf("EndpointAuth")), 404: error("no such config"), ...errors },
      },
      patch: {
        operationId: "changeConfigAuth",
        summary:
          "Change the endpoint auth and headers as a merge (null removes a kind; absent fields are kept; a new oauth2.tokenUrl needs oauth2.clientSecret again, and no credential goes over plain http:// except to loopback while the egress policy allows it)",
        requestBody: { required: true, content: json(ref("EndpointAuthChange")) },
        responses: { 200: ok("the auth", dataOf("EndpointAuth")), 404: error("no such config"), ...errors },
      },
      delete: {
        operationId: "deleteConfigAuth",
        summary: "Remove every kind of endpoint auth and every custom header of the config",
        responses: {
          200: ok("removed", { type: "object", properties: { data: { type: "object" } } }),
          404: error("no such config"),
          ...errors,
        },
      },
    },
    "/configs/{id}/secret/change": {
      parameters: [idParam()],
      put: {
        operationId: "changeConfigSecret",
        summary:
          "Rotate the secret (generated when absent), optionally keeping the old one signing for an overlap",
        requestBody: { required: false, content: json(ref("SecretChange")) },
        responses: {
          200: ok("the config, with the new secret in clear", dataOf("Config")),
          404: error("no such config"),
          ...errors,
        },
      },
    },
    "/configs/{id}/test": {
      parameters: [idParam()],
      post: {
        operationId: "testConfig",
        summary: "Send a signed test event to the endpoint now and return the recorded attempt (write scope)",
        requestBody: { required: false, content: json(ref("ConfigTestRequest")) },
        responses: {
          200: ok("the attempt", dataOf("Attempt")),
          404: error("no such config"),
          429: error(
            "the config's or the tenant's test sends of the last minute reached their quota (--config-max-test-sends, --tenant-max-test-sends); Retry-After says when one frees",
          ),
          ...errors,
        },
      },
      get: {
        operationId: "testConfigDeprecated",
        deprecated: true,
        summary:
          "Deprecated alias of POST /configs/{id}/test (a GET with a side effect); needs the write scope",
        responses: { 200: ok("the attempt", dataOf("Attempt")), 404: error("no such config"), ...errors },
      },
    },
    "/configs/{id}/attempts": {
      parameters: [idParam()],
      get: {
        operationId: "listConfigAttempts",
        summary: "Attempts of every delivery to this config, newest first (paged, default 100)",
        parameters: pageParams,
        responses: { 200: ok("attempts", ref("AttemptCursor")), 404: error("no such config"), ...errors },
      },
    },
    "/configs/{id}/deliveries": {
      parameters: [idParam()],
      get: {
        operationId: "listConfigDeliveries",
        summary:
          "Deliveries to this config, one per webhook, newest first by last attempt (or acceptance while unsent); paged, default 50",
        parameters: [
          {
            name: "status",
            in: "query",
            description: "only deliveries in this status",
            schema: { enum: [...DELIVERY_STATUSES] },
          },
          {
            name: "eventType",
            in: "query",
            description: "only deliveries of this event type (compared in lower case)",
            schema: { type: "string", minLength: 1, maxLength: 255 },
          },
          ...pageParams,
        ],
        responses: {
          200: ok("deliveries", ref("DeliverySummaryCursor")),
          404: error("no such config"),
          ...errors,
        },
      },
    },
    "/webhooks/{webhookId}": {
      parameters: [idParam("webhookId", "webhook (delivery)")],
      get: {
        operationId: "getDelivery",
        summary: "One delivery: current status, next retry and every attempt",
        responses: { 200: ok("the delivery", dataOf("Delivery")), 404: error("no such delivery"), ...errors },
      },
    },
    "/webhooks/{webhookId}/attempts": {
      parameters: [idParam("webhookId", "webhook (delivery)")],
      get: {
        operationId: "listDeliveryAttempts",
        summary: "Attempts of one delivery, newest first (paged, default 100)",
        parameters: pageParams,
        responses: { 200: ok("attempts", ref("AttemptCursor")), 404: error("no such delivery"), ...errors },
      },
    },
    "/webhooks/{webhookId}/replay": {
      parameters: [
        idParam("webhookId", "webhook (delivery) to replay"),
        {
          name: "Idempotency-Key",
          in: "header",
          required: true,
          description: "the same key never starts a second replay of this webhook",
          schema: { type: "string", maxLength: 255 },
        },
      ],
      post: {
        operationId: "replayDelivery",
        summary: "Deliver the webhook's event to its config again, as a new delivery linked to the original",
        responses: {
          202: ok("replay started", dataOf("Replay")),
          200: ok("this key already replayed the webhook", dataOf("Replay")),
          404: error("no such delivery"),
          409: error("its config was deleted or is inactive"),
          ...errors,
        },
      },
    },
    "/webhooks/{webhookId}/cancel": {
      parameters: [idParam("webhookId", "webhook (delivery) to cancel")],
      post: {
        operationId: "cancelDelivery",
        summary:
          "Cancel a delivery still queued or sending: a send in flight completes, then the delivery ends failed with reason `cancelled`",
        responses: {
          202: ok("cancellation requested from its workflow", dataOf("Cancellation")),
          404: error("no such delivery"),
          409: error("the delivery has already ended"),
          ...errors,
        },
      },
    },
    "/tenants": {
      get: {
        operationId: "listTenants",
        summary: "Tenants, newest first (paged, default 100); 403 for a tenant-scoped token",
        parameters: [
          {
            name: "uid",
            in: "query",
            schema: { type: "string" },
            description: "only the tenant with this uid",
          },
          ...pageParams.map((p) =>
            p.name === "pageSize" ? { ...p, description: "items per page (1–1000, default 100)" } : p,
          ),
        ],
        responses: { 200: ok("tenants", ref("TenantCursor")), ...errors },
      },
      post: {
        operationId: "createTenant",
        summary: "Create a tenant; 403 for a tenant-scoped token",
        requestBody: { required: true, content: json(ref("TenantUser")) },
        responses: {
          200: ok("the created tenant", dataOf("Tenant")),
          409: error("a tenant with this uid exists"),
          ...errors,
        },
      },
    },
    "/tenants/{tenant}": {
      parameters: [tenantParam],
      get: {
        operationId: "getTenant",
        summary: "One tenant",
        responses: { 200: ok("the tenant", dataOf("Tenant")), 404: error("no such tenant"), ...errors },
      },
      patch: {
        operationId: "updateTenant",
        summary:
          "Change a tenant's uid, name or metadata (the default tenant keeps its uid); 403 for a tenant-scoped token",
        requestBody: { required: true, content: json(ref("TenantUser")) },
        responses: {
          200: ok("the updated tenant", dataOf("Tenant")),
          404: error("no such tenant"),
          409: error("another tenant has this uid"),
          ...errors,
        },
      },
      delete: {
        operationId: "deleteTenant",
        summary:
          "Delete a tenant and its configs, as deleting each config does (queued deliveries closed, attempt rows kept until retention); 403 for a tenant-scoped token",
        responses: {
          200: { description: "deleted, with the number of configs deleted" },
          404: error("no such tenant"),
          409: error("the default tenant cannot be deleted"),
          ...errors,
        },
      },
    },
    "/tenants/{tenant}/configs": {
      parameters: [tenantParam],
      get: {
        operationId: "listTenantConfigs",
        summary: "The tenant's configs, newest update first (optional paging)",
        parameters: pageParams,
        responses: { 200: ok("the configs", ref("ConfigCursor")), 404: error("no such tenant"), ...errors },
      },
    },
    ...portalPaths(errors, tenantParam),
    "/events": {
      post: {
        operationId: "ingestEvent",
        summary:
          "Deliver one platform event, exactly as if it had been consumed from the broker (same matching, ids, bounds)",
        requestBody: { required: true, content: json(ref("EventMessage")) },
        responses: {
          ...errors,
          202: ok("its deliveries started (or nothing subscribes to it)", dataOf("Ingested")),
          200: ok("this idempotency key was delivered before: nothing new started", dataOf("Ingested")),
          400: error(
            "not an event message, over a bound (depth, size), or (with --enforce-event-schemas) a payload failing its type's schema in the event catalog: the message names it (the payload's path for a schema)",
          ),
          409: error("a delivery cannot start as it is (e.g. a config row that is not usable)"),
          413: error("body larger than the event bound"),
          503: error("a delivery cannot start now (Temporal or the database unavailable): send it again"),
        },
      },
    },
    "/dead-letters": {
      get: {
        operationId: "listDeadLetters",
        summary: "Messages whose deliveries could not start, newest first (paged, default 100)",
        parameters: [
          { name: "status", in: "query", schema: { enum: ["pending", "replayed"] } },
          { name: "topic", in: "query", schema: { type: "string" } },
          { name: "configID", in: "query", schema: UUID, description: "only this config's" },
          ...pageParams,
        ],
        responses: { 200: ok("dead letters", ref("DeadLetterCursor")), ...errors },
      },
    },
    "/dead-letters/{id}": {
      parameters: [idParam("id", "dead letter")],
      get: {
        operationId: "getDeadLetter",
        summary: "One dead letter with its whole message",
        responses: {
          200: ok("the dead letter", dataOf("DeadLetter")),
          404: error("no such dead letter"),
          ...errors,
        },
      },
      delete: {
        operationId: "deleteDeadLetter",
        summary: "Forget a dead letter (its message is not delivered)",
        responses: { 200: { description: "deleted" }, 404: error("no such dead letter"), ...errors },
      },
    },
    "/dead-letters/{id}/replay": {
      parameters: [idParam("id", "dead letter")],
      post: {
        operationId: "replayDeadLetter",
        summary:
          "Start the message's deliveries again (its config's, or every matching active config's when the whole message failed); a delivery that had started is not started twice",
        responses: {
          200: ok("every delivery started; the dead letter is now replayed", dataOf("DeadLetterReplay")),
          404: error("no such dead letter"),
          409: error("it still cannot start as it is (the message names why): fix the cause first"),
          ...errors,
          503: error("it cannot start now (Temporal or the database unavailable): try again"),
        },
      },
    },
    "/event-types": {
      get: {
        operationId: "listEventTypes",
        summary: "The event catalog: the event types this deployment emits, by name (paged, default 100)",
        parameters: pageParams.map((p) =>
          p.name === "pageSize" ? { ...p, description: "items per page (1–1000, default 100)" } : p,
        ),
        responses: { 200: ok("event types", ref("EventTypeCursor")), ...errors },
      },
    },
    "/event-types/{name}": {
      parameters: [
        {
          name: "name",
          in: "path",
          required: true,
          description: "an event type <app>.<type> (lower-cased; no wildcard)",
          schema: { type: "string", maxLength: 255 },
        },
      ],
      get: {
        operationId: "getEventType",
        summary: "One event type of the catalog, with its schema and example",
        responses: {
          200: ok("the event type", dataOf("EventType")),
          404: error("not in the catalog"),
          ...errors,
        },
      },
      put: {
        operationId: "putEventType",
        summary:
          "Create or replace an event type: description, optional JSON Schema of its payload, example, deprecated flag",
        requestBody: { required: true, content: json(ref("EventTypeUser")) },
        responses: {
          201: ok("created", dataOf("EventType")),
          200: ok("replaced (a new version)", dataOf("EventType")),
          413: error("body larger than 208 KiB"),
          ...errors,
        },
      },
      delete: {
        operationId: "deleteEventType",
        summary:
          "Remove an event type from the catalog (configs subscribed to it are not changed; its events are no longer checked)",
        responses: { 200: { description: "deleted" }, 404: error("not in the catalog"), ...errors },
      },
    },
    "/metrics": {
      get: {
        operationId: "metrics",
        security: [],
        summary: "Prometheus metrics",
        responses: { 200: { description: "metrics in the Prometheus text format" } },
      },
    },
    "/_healthcheck": {
      get: {
        operationId: "health",
        security: [],
        summary: "Dependencies of the process (database, Temporal, worker)",
        responses: {
          200: { description: "healthy" },
          503: { description: "a dependency failed; the body names it" },
        },
      },
    },
    "/_info": {
      get: {
        operationId: "info",
        security: [],
        summary: "Service version",
        responses: { 200: ok("version", { type: "object", properties: { version: { type: "string" } } }) },
      },
    },
  },
};

function dataOf(name: string) {
  return { type: "object", required: ["data"], properties: { data: ref(name) } };
}

function cursorOf(name: string) {
  return {
    type: "object",
    required: ["cursor"],
    properties: {
      cursor: {
        type: "object",
        required: ["hasMore", "data"],
        properties: {
          pageSize: { type: "integer" },
          hasMore: { type: "boolean" },
          next: { type: "string", description: "pass as `cursor` to get the next page" },
          data: { type: "array", items: ref(name) },
        },
      },
    },
  };
}
