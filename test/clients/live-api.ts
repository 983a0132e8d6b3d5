import { DeliveryEnv } from "../support/delivery-env.js";
import { TestJwks } from "../support/jwks.js";

// The live API the client packages' tests call.

export interface LiveApi {
  url: string;
  /** A bearer JWT with the write scope and no tenant claim, valid 10 minutes. */
  token: string;
  stop(): Promise<void>;
}

/**
 * `webhooks serve --worker` with authentication on (a real JWKS) on the shared test
 * Temporal server, its own NATS stream and a fresh database; one test send a minute per
 * config, so that a second one is a real 429 with Retry-After.
 */
export async function startLiveApi(): Promise<LiveApi> {
  const jwks = await TestJwks.start();
  const env = new DeliveryEnv();
  try {
    await env.start([...jwks.args, "--config-max-test-sends", "1"]);
  } catch (err) {
    jwks.close();
    await env.stop();
    throw err;
  }
  return {
    url: env.api.url,
    token: await jwks.sign({}),
    async stop() {
      await env.stop();
      jwks.close();
    },
  };
}
