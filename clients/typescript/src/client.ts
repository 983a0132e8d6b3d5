import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./generated/openapi.js";
import { type RetryPolicy, retryingFetch } from "./retry.js";

// The generated, typed client (openapi-fetch over the paths of the OpenAPI document) with
// what every integrator needs around it: the bearer token and retries of 429 and 503.

export type WebhooksClient = Client<paths>;

export interface WebhooksClientOptions {
  /** The API's root URL, e.g. https://webhooks.example.com. */
  baseUrl: string;
  /** The bearer API token, or a function giving the current one (asked before every request). */
  token?: string | (() => string | Promise<string>);
  /** Retries of 429 and 503 answers (defaults: DEFAULT_RETRY_POLICY); false turns them off. */
  retry?: Partial<RetryPolicy> | false;
  /** The fetch to send requests with (globalThis.fetch by default). */
  fetch?: (request: Request) => Promise<Response>;
}

export function createWebhooksClient(options: WebhooksClientOptions): WebhooksClient {
  const base = URL.canParse(options.baseUrl) ? new URL(options.baseUrl) : undefined;
  if (base?.protocol !== "http:" && base?.protocol !== "https:")
    throw new TypeError(`baseUrl must be an absolute http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const client = createClient<paths>({
    baseUrl: base.href.replace(/\/+$/, ""),
    fetch: options.retry === false ? send : retryingFetch(send, options.retry),
  });
  const { token } = options;
  if (token !== undefined) {
    client.use({
      async onRequest({ request }) {
        const value = typeof token === "function" ? await token() : token;
        if (!value) throw new TypeError("the token is empty");
        request.headers.set("Authorization", `Bearer ${value}`);
        return request;
      },
    });
  }
  return client;
}
