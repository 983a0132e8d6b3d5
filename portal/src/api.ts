// The one API client of the page: generated types from the OpenAPI document (build step
// in portal/build.mjs) and openapi-fetch, so every call is checked against the routes the
// server publishes. Every call carries the portal token; a 401 ends the session view.
import createClient from "openapi-fetch";
import type { components, paths } from "../../generated/portal/openapi";

export type Config = components["schemas"]["Config"];
export type ConfigUser = components["schemas"]["ConfigUser"];
export type EndpointStats = components["schemas"]["EndpointStats"];
export type EventType = components["schemas"]["EventType"];
export type Attempt = components["schemas"]["Attempt"];
export type Delivery = components["schemas"]["Delivery"];
export type DeliverySummary = components["schemas"]["DeliverySummary"];
export type Recovery = components["schemas"]["Recovery"];
export type EndpointAuth = components["schemas"]["EndpointAuth"];
export type EndpointAuthChange = components["schemas"]["EndpointAuthChange"];
export type PortalSession = components["schemas"]["PortalSessionCurrent"];

/** An error answer of the API, kept whole so screens can show its message where it belongs. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Any failure of a call as an ApiError (a network failure has status 0). */
export function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError(0, "NETWORK", String(err));
}

/** Why the session cannot be used any more (401 SESSION_EXPIRED, SESSION_REVOKED, UNAUTHORIZED). */
export interface SessionEnd {
  code: string;
  message: string;
}

let ended: (end: SessionEnd) => void = () => {};
/** The app registers what to show when any call answers 401. */
export function onSessionEnd(show: (end: SessionEnd) => void) {
  ended = show;
}

export function makeClient(token: string) {
  const client = createClient<paths>({ baseUrl: window.location.origin });
  client.use({
    onRequest({ request }) {
      request.headers.set("authorization", `Bearer ${token}`);
      return request;
    },
    async onResponse({ response }) {
      if (response.status === 401) {
        const body = (await response
          .clone()
          .json()
          .catch(() => ({}))) as { errorCode?: string; errorMessage?: string };
        ended({ code: body.errorCode ?? "UNAUTHORIZED", message: body.errorMessage ?? "" });
      }
      return response;
    },
  });
  return client;
}

export type Client = ReturnType<typeof makeClient>;

/** The data of a call, or its error answer thrown as an ApiError. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const body = (error ?? {}) as { errorCode?: string; errorMessage?: string };
  throw new ApiError(
    response.status,
    body.errorCode ?? `HTTP_${response.status}`,
    body.errorMessage ?? response.statusText,
  );
}
