// The OpenAPI schemas of a config's endpoint auth and custom headers (api/endpoint-auth-input.ts
// checks what the schema cannot say, naming the field). Credentials have no pattern: an
// error message would quote the value.

const PEM = (maxLength: number, description: string) => ({
  type: "string",
  minLength: 1,
  maxLength,
  description,
});
const MASKED = { type: "string", const: "********", description: "masked: never returned in clear" };

export const endpointAuthSchemas = {
  EndpointAuthChange: {
    type: "object",
    additionalProperties: false,
    description:
      "Endpoint auth and custom headers, applied as a merge: a kind absent is kept, null removes it, and inside a kind " +
      "a field absent keeps its stored value (so one credential changes without resending the others). Only one of " +
      "basic, bearer and oauth2 (each sets Authorization). Every credential is sealed at rest and masked in answers. " +
      "A credential is bound to the endpoint origin (and the client secret to the token URL) it was given for: a change of " +
      "either needs it again in the same request. Credentials over plain http:// are refused (endpoint and token URL), " +
      "except to a loopback address or localhost while the egress policy allows loopback (no --egress-deny-private).",
    properties: {
      headers: {
        type: ["array", "null"],
        maxItems: 20,
        description:
          "custom headers sent with every delivery to the endpoint's origin, replacing the whole list (a header given " +
          "without value keeps the stored value of that name); values are sealed like credentials. Not allowed: " +
          "svc-webhook-*, webhook-id, webhook-timestamp, webhook-signature, Host, Content-Length, Content-Type, User-Agent, Connection, Keep-Alive, Transfer-Encoding, TE, " +
          "Upgrade, Trailer, Expect, Proxy-*, traceparent, tracestate, baggage; names and values total at most 8192 bytes",
        items: {
          type: "object",
          additionalProperties: false,
          required: ["name"],
          properties: {
            name: {
              type: "string",
              minLength: 1,
              maxLength: 128,
              description: "an HTTP header name (token)",
            },
            value: {
              type: "string",
              maxLength: 4096,
              description:
                "visible ASCII, spaces and tabs (no CR/LF); absent keeps the stored value of this name",
            },
          },
        },
      },
      basic: {
        type: ["object", "null"],
        additionalProperties: false,
        description: "HTTP Basic auth (RFC 7617)",
        properties: {
          username: { type: "string", minLength: 1, maxLength: 256, description: "without ':'" },
          password: { type: "string", maxLength: 1024, description: "sealed at rest" },
        },
      },
      bearer: {
        type: ["object", "null"],
        additionalProperties: false,
        description: "a static bearer token (Authorization: Bearer)",
        properties: {
          token: { type: "string", minLength: 1, maxLength: 4096, description: "RFC 6750 token; sealed" },
        },
      },
      oauth2: {
        type: ["object", "null"],
        additionalProperties: false,
        description:
          "OAuth 2.0 client credentials: a token fetched from tokenUrl (client_secret_basic) before the send, cached until " +
          "shortly before it expires and shared by the process's sends; a 401 from the endpoint fetches a new one and " +
          "re-sends once within the attempt",
        properties: {
          tokenUrl: {
            type: "string",
            maxLength: 2048,
            description:
              "absolute https URL (http only to loopback while the egress policy allows it), under the egress policy; a new one needs clientSecret again",
          },
          clientId: { type: "string", minLength: 1, maxLength: 256 },
          clientSecret: { type: "string", minLength: 1, maxLength: 1024, description: "sealed at rest" },
          scope: { type: ["string", "null"], maxLength: 1024, description: "null removes it" },
          audience: { type: ["string", "null"], maxLength: 2048, description: "null removes it" },
        },
      },
      tls: {
        type: ["object", "null"],
        additionalProperties: false,
        description:
          "mutual TLS: a client certificate and its key (PEM, checked to match), and a CA bundle that replaces the system " +
          "roots for the endpoint; applied to https hops of the endpoint's origin",
        properties: {
          certificate: PEM(65536, "PEM certificate (chain: the client certificate first)"),
          privateKey: PEM(16384, "PEM private key, unencrypted (PKCS#8, PKCS#1, SEC1); sealed at rest"),
          caBundle: {
            ...PEM(262144, "PEM certificates the endpoint's certificate must chain to; null removes it"),
            type: ["string", "null"],
          },
        },
      },
    },
  },
  EndpointAuth: {
    type: "object",
    description: "The kinds of endpoint auth configured, with their public parts; every credential masked",
    properties: {
      headers: {
        type: "array",
        items: { type: "object", properties: { name: { type: "string" }, value: MASKED } },
      },
      basic: { type: "object", properties: { username: { type: "string" }, password: MASKED } },
      bearer: { type: "object", properties: { token: MASKED } },
      oauth2: {
        type: "object",
        properties: {
          tokenUrl: { type: "string" },
          clientId: { type: "string" },
          clientSecret: MASKED,
          scope: { type: "string" },
          audience: { type: "string" },
        },
      },
      tls: {
        type: "object",
        properties: { certificate: { type: "string" }, privateKey: MASKED, caBundle: { type: "string" } },
      },
    },
  },
} as const;
