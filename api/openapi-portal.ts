// The OpenAPI part of the consumer portal: its sessions' schemas and routes, and the bearer
// scheme of portal tokens (the page's client is generated from this document).

const FEATURE = {
  type: "string",
  enum: ["endpoints", "deliveries", "replay", "recovery", "test-events", "secrets"],
  description:
    "endpoints: configs, their health, auth and the event catalog; deliveries: attempts and deliveries; replay: replay or cancel a delivery; recovery: bulk recovery; test-events: test deliveries; secrets: read and rotate the signing secret",
} as const;
const TIME = { type: "string", format: "date-time" } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ "application/json": { schema } });
const error = (description: string) => ({ description, content: json(ref("Error")) });

export const portalSecurityScheme = {
  portalSession: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "portal+jwt",
    description:
      "a portal session's token (POST /tenants/{tenant}/portal-sessions): scoped to its tenant and features like a tenant-scoped token; an expired or revoked one is a 401 SESSION_EXPIRED or SESSION_REVOKED on every route",
  },
};

const sessionFields = {
  id: { type: "string", format: "uuid" },
  tenantId: { type: "string", format: "uuid" },
  features: { type: "array", items: FEATURE },
  theme: ref("PortalTheme"),
  createdBy: {
    type: ["string", "null"],
    description: "subject of the token that created it (null with auth off)",
  },
  createdAt: TIME,
  expiresAt: TIME,
};

export const portalSchemas = {
  PortalTheme: {
    type: "object",
    additionalProperties: false,
    description: "What the page applies as CSS variables.",
    properties: {
      brandColor: { type: "string", pattern: "^#[0-9A-Fa-f]{6}$", description: "#rrggbb" },
      logoUrl: {
        type: "string",
        maxLength: 2048,
        description: "an https URL whose host is in --portal-logo-hosts",
      },
    },
  },
  PortalSessionUser: {
    type: "object",
    additionalProperties: false,
    description: "A portal session as its creator asks for it (every field optional).",
    properties: {
      expiresIn: {
        type: "string",
        maxLength: 64,
        description: 'Go duration, whole seconds from 1s to 24h (default "1h")',
      },
      features: {
        type: "array",
        minItems: 1,
        uniqueItems: true,
        items: FEATURE,
        description:
          'default: every feature but "secrets" (least privilege: ask for it to show or rotate the signing secret)',
      },
      theme: ref("PortalTheme"),
    },
  },
  PortalSession: {
    type: "object",
    required: Object.keys(sessionFields),
    properties: sessionFields,
  },
  PortalSessionCreated: {
    type: "object",
    required: [...Object.keys(sessionFields), "url", "token"],
    properties: {
      ...sessionFields,
      url: {
        type: "string",
        description: "<base>/portal/#token=<token>: the page, the token in the fragment",
      },
      token: { type: "string", description: "the session's bearer token (shown once)" },
    },
  },
  PortalSessionCurrent: {
    type: "object",
    required: ["id", "tenant", "features", "theme", "expiresAt"],
    properties: {
      id: { type: "string", format: "uuid" },
      tenant: {
        type: "object",
        required: ["id", "uid", "name"],
        properties: {
          id: { type: "string", format: "uuid" },
          uid: { type: "string" },
          name: { type: "string" },
        },
      },
      features: { type: "array", items: FEATURE },
      theme: ref("PortalTheme"),
      expiresAt: TIME,
    },
  },
};

/** The routes; `errors` and `tenantParam` are the document's own. */
export function portalPaths(errors: Record<number, object>, tenantParam: object) {
  const noPortal = "; 403 for a portal token";
  return {
    "/tenants/{tenant}/portal-sessions": {
      parameters: [tenantParam],
      post: {
        operationId: "createPortalSession",
        summary: `Create a consumer portal session for the tenant (write scope)${noPortal}`,
        requestBody: { required: false, content: json(ref("PortalSessionUser")) },
        responses: {
          ...errors,
          201: { description: "the session, its token and URL", content: json(ref("PortalSessionCreated")) },
          404: error("no such tenant"),
          429: error("the tenant has its quota of live sessions (--tenant-max-portal-sessions)"),
          503: error(
            "this process has no secrets key ring (--insecure-plaintext-secrets) to sign tokens with",
          ),
        },
      },
      get: {
        operationId: "listPortalSessions",
        summary: `The tenant's live portal sessions (neither expired nor revoked), newest first, without tokens${noPortal}`,
        responses: {
          ...errors,
          200: { description: "the sessions", content: json(ref("PortalSessionCursor")) },
          404: error("no such tenant"),
        },
      },
    },
    "/tenants/{tenant}/portal-sessions/{id}": {
      parameters: [
        tenantParam,
        {
          name: "id",
          in: "path",
          required: true,
          description: "portal session id",
          schema: { type: "string", format: "uuid" },
        },
      ],
      delete: {
        operationId: "revokePortalSession",
        summary: `Revoke a portal session: its token answers 401 SESSION_REVOKED from now on${noPortal}`,
        responses: {
          ...errors,
          204: { description: "revoked (or already revoked)" },
          404: error("no such tenant or session"),
        },
      },
    },
    "/portal-sessions/current": {
      get: {
        operationId: "currentPortalSession",
        summary: "The session of the portal token calling (the page's bootstrap)",
        security: [{ portalSession: [] }],
        responses: {
          ...errors,
          200: { description: "the session", content: json(ref("PortalSessionCurrent")) },
          401: error(
            "not a portal token (UNAUTHORIZED), or its session expired (SESSION_EXPIRED) or was revoked (SESSION_REVOKED)",
          ),
        },
      },
    },
  };
}
