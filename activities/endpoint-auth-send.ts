import type { EndpointAuth } from "../core/endpoint-auth-rows.js";
import { type EndpointTls, type SendRequest, type SendResult, sendWebhook } from "./http-send.js";
import { type OAuthTokens, TokenFetchError } from "./oauth-tokens.js";

// A webhook's send with its config's endpoint auth: custom headers, Authorization (basic,
// bearer, or an OAuth token), and the client certificate. With OAuth, a 401 means the
// token may have been revoked or expired early: it is fetched again once and the webhook
// re-sent once, within the same attempt; the attempt row records the last answer. The
// send timeout covers the whole attempt (token, send, refresh, re-send).

const tlsOf = (auth: EndpointAuth): EndpointTls | undefined =>
  auth.tls
    ? {
        ...(auth.tls.certificate ? { cert: auth.tls.certificate } : {}),
        ...(auth.tls.privateKey ? { key: auth.tls.privateKey } : {}),
        ...(auth.tls.caBundle ? { ca: auth.tls.caBundle } : {}),
      }
    : undefined;

function staticHeaders(auth: EndpointAuth): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of auth.headers) headers[name.toLowerCase()] = value;
  if (auth.basic)
    headers.authorization = `Basic ${Buffer.from(`${auth.basic.username}:${auth.basic.password}`).toString("base64")}`;
  if (auth.bearer) headers.authorization = `Bearer ${auth.bearer}`;
  return headers;
}

const failed = (started: number, err: TokenFetchError): SendResult => ({
  statusCode: 0,
  error: `not sent: ${err.message}`,
  ...(err.permanent ? { permanent: true } : {}),
  responseExcerpt: "",
  durationMs: Date.now() - started,
});

export async function sendWithEndpointAuth(
  req: SendRequest & { timeoutMs: number },
  auth: EndpointAuth | null,
  configId: string,
  tokens: OAuthTokens,
): Promise<SendResult> {
  if (!auth) return sendWebhook(req);
  const headers = staticHeaders(auth);
  const tls = tlsOf(auth);
  const oauth = auth.oauth2;
  if (!oauth) return sendWebhook({ ...req, endpointHeaders: headers, tls });
  const started = Date.now();
  const left = () => Math.max(1, req.timeoutMs - (Date.now() - started));
  const withToken = async (token: string) => {
    const result = await sendWebhook({
      ...req,
      timeoutMs: left(),
      endpointHeaders: { ...headers, authorization: `Bearer ${token}` },
      tls,
    });
    return { ...result, durationMs: Date.now() - started };
  };
  let token: string;
  try {
    token = await tokens.token(configId, oauth, left());
  } catch (err) {
    if (err instanceof TokenFetchError) return failed(started, err);
    throw err;
  }
  const first = await withToken(token);
  if (first.statusCode !== 401) return first;
  tokens.invalidate(configId, token);
  try {
    token = await tokens.token(configId, oauth, left());
  } catch (err) {
    if (err instanceof TokenFetchError)
      return failed(
        started,
        new TokenFetchError(`the endpoint answered 401 and ${err.message}`, err.permanent),
      );
    throw err;
  }
  return withToken(token);
}
