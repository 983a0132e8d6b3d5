import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import querystring from "node:querystring";
import type { Application } from "express";
import type { EntityResponse, EntityServer } from "../server/server.js";
import type { EntityRouterOptions } from "./express-adapter.js";
import { answerHttpRequest, type HttpRequestView, isEmptyBody, logAnswer } from "./http-request-map.js";

/**
 * A request listener for a host that mounts `createEntityRouter` at the root
 * of an express `app`: it answers the entity requests that need nothing of
 * express straight on node:http, with the bytes the router would send, and
 * hands every other request to `app`. Express's per-request set-up (prototype
 * swaps, router dispatch, `res.send`) costs more CPU than the rest of a
 * get-by-id answer.
 *
 * Taken here: GET and HEAD without a body, an origin-form target of printable
 * ASCII without a fragment, a path not starting with `/_` (the host's own
 * endpoints: no alias starts with "_"), and a format that needs no content
 * negotiation (an extension, a valid `_format`, or no Accept header). All of
 * it only while the app sends neither ETag nor X-Powered-By and parses queries
 * with node:querystring (express's "simple" parser), as express would answer
 * them then.
 */
export function entityFastPath(
  server: EntityServer,
  app: Application,
  options: Omit<EntityRouterOptions, "bodyLimit"> = {},
): RequestListener {
  const realm = options.realm ?? "entity-server";
  return (req, res) => {
    const taken = takeRequest(req, app);
    if (!taken) {
      app(req, res);
      return;
    }
    answerHttpRequest(taken.view, taken.query, server).then(
      (response) => {
        send(res, taken.view.method, response, realm);
        logAnswer(options.logger, taken.view, response.status);
      },
      (err: unknown) => {
        // answerHttpRequest renders every failure; this is a bug, answered as express would not be able to.
        options.logger?.error({ err }, "entity request failed outside the server");
        res.destroy();
      },
    );
  };
}

/** The request as the translation reads it, when this listener may answer it. */
function takeRequest(
  req: IncomingMessage,
  app: Application,
): { view: HttpRequestView; query: Record<string, unknown> } | undefined {
  const method = req.method;
  const url = req.url;
  if ((method !== "GET" && method !== "HEAD") || url === undefined) return undefined;
  if (!/^\/[\x21-\x22\x24-\x7e]*$/.test(url) || url.startsWith("/_")) return undefined;
  const headers = req.headers;
  const view: HttpRequestView = {
    method,
    path: url,
    originalUrl: url,
    // express's req.get
    get: (name) => {
      const lc = name.toLowerCase();
      const value = lc === "referer" || lc === "referrer" ? headers.referrer || headers.referer : headers[lc];
      return Array.isArray(value) ? value.join(", ") : value;
    },
    // express's req.accepts without an Accept header (requests with one that need it go to express)
    accepts: (types) => types[0] ?? false,
    // express's req.is for a request without a body
    is: () => null,
  };
  if (!isEmptyBody(view)) return undefined;
  if (app.get("etag fn") || app.enabled("x-powered-by") || app.get("query parser fn") !== querystring.parse)
    return undefined;
  // What express's req.path and req.query are for such a target (parseurl's fast path).
  const q = url.indexOf("?");
  const path = q < 0 ? url : url.slice(0, q);
  const query = querystring.parse(q < 0 ? "" : url.slice(q + 1)) as Record<string, unknown>;
  if (headers.accept && !/\.(xml|json)$/i.test(path)) {
    const format = query._format;
    if (typeof format !== "string" || !/^(xml|json)$/i.test(format)) return undefined;
  }
  return { view: { ...view, path }, query };
}

/** What the router's send writes through express: the same status line, headers in the same order, body. */
function send(res: ServerResponse, method: string, r: EntityResponse, realm: string): void {
  res.statusCode = r.status;
  res.setHeader("Content-Type", r.contentType);
  if (r.status === 401) res.setHeader("WWW-Authenticate", `Basic realm="${realm}", charset="UTF-8"`);
  if (r.headers) for (const [name, value] of Object.entries(r.headers)) res.setHeader(name, String(value));
  res.setHeader("Content-Length", String(Buffer.byteLength(r.body)));
  if (method === "HEAD") res.end();
  else res.end(r.body);
}
