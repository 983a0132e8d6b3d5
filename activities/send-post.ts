import { Context } from "@temporalio/activity";
import { destinationOf, openDestinationSecret } from "../core/destinations.js";
import { openStoredAuth, type StoredAuth } from "../core/endpoint-auth-rows.js";
import { SealedValueError } from "../core/sealing.js";
import type { Config } from "../generated/prisma/client.js";
import { batchBody } from "./batch-body.js";
import type { SendDeps } from "./delivery-deps.js";
import type { SendResult } from "./http-send.js";
import { activeSecrets } from "./secrets.js";
import { type OpenedCredentials, sendToDestination } from "./send-destination.js";
import { signatureHeadersOf } from "./signature-headers.js";

// The POST of a send (send-pipeline.ts): signed with the config's secrets and sent with its
// endpoint's auth, both read with the config at each send, so a secret or credential
// changed through the API applies to the next send. A config with a broker destination
// gets the same body and signed headers as one message instead (send-destination.ts).

/** What one POST carries: one delivery's event, or a batch's events' bodies as one array. */
export type PostOf =
  | { webhookId: string; body: string; idempotencyKey: string }
  | { batchId: string; events: readonly { webhookId: string; body: string }[] };

const notSent = (error: string, permanent: boolean): SendResult => ({
  statusCode: 0,
  error,
  ...(permanent ? { permanent } : {}),
  responseExcerpt: "",
  durationMs: 0,
});

/**
 * Signs and POSTs. An endpoint no URL parser takes (a row written by SQL or an older
 * version) can never succeed: a permanent failure. A secret or credential sealed under a
 * key this process lacks is never sent with a wrong signature: an attempt that says which
 * key is missing, retried under the policy, so restoring the key lets the delivery go on.
 */
export async function postSigned(
  { secrets, onPost, sendTimeoutMs, egress, oauthTokens, brokers, signatureHeaders }: SendDeps,
  config: Config,
  stored: StoredAuth | null,
  what: PostOf,
  timeoutMs: number | undefined,
): Promise<SendResult> {
  if (!URL.canParse(config.endpoint))
    return notSent(`endpoint ${JSON.stringify(config.endpoint)} is not a URL`, true);
  let signing: string[];
  let credentials: OpenedCredentials;
  try {
    signing = activeSecrets(secrets.openConfig(config), new Date());
    const http = destinationOf(config).type === "http";
    credentials = {
      auth: stored && http ? openStoredAuth(secrets, config.id, stored) : null,
      secret: http ? {} : openDestinationSecret(secrets, config.id, stored?.destination_secret),
    };
  } catch (err) {
    if (!(err instanceof SealedValueError)) throw err;
    return notSent(`not sent: ${err.message}`, false);
  }
  const workflowId = Context.current().info.workflowExecution?.workflowId;
  if (workflowId) onPost?.(workflowId);
  const request =
    "batchId" in what
      ? {
          webhookId: what.batchId,
          batchIds: what.events.map((e) => e.webhookId),
          body: batchBody(what.events.map((e) => e.body)),
          // Each event's idempotency key is in its element; the batch has none of its own.
          idempotencyKey: "",
        }
      : what;
  return sendToDestination({ egress, oauthTokens, brokers }, config, credentials, {
    ...request,
    secrets: signing,
    test: false,
    signatureHeaders: signatureHeadersOf(config.signatureHeaders, signatureHeaders),
    timeoutMs: timeoutMs ?? sendTimeoutMs,
    eventBodies: "batchId" in what ? what.events.map((e) => e.body) : [what.body],
  });
}
