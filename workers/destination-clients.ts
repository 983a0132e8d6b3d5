import { BrokerConnections } from "../activities/destinations/connections.js";
import { OAuthTokens } from "../activities/oauth-tokens.js";
import type { DestinationClients } from "../activities/send-destination.js";
import type { ProcessContext } from "../core/process-context.js";

/**
 * The process's clients of the configs' destinations, shared by its deliveries and the
 * API's test deliveries: endpoints' OAuth tokens and broker connections. The connections
 * close when the process stops, after the workers (a shutdown step added before them runs
 * after them).
 */
export function destinationClients(ctx: ProcessContext): DestinationClients {
  const brokers = new BrokerConnections(ctx.egress, ctx.logger);
  ctx.shutdown.add("broker destinations", () => brokers.close());
  return { egress: ctx.egress, oauthTokens: new OAuthTokens(ctx.egress), brokers };
}
