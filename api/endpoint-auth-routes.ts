import type { Router } from "express";
import type pg from "pg";
import { inTransaction } from "../common/db/transaction.js";
import type { ConfigSecrets } from "../core/config-secrets.js";
import { destinationOf } from "../core/destinations.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import {
  EMPTY_AUTH,
  readStoredAuth,
  type StoredAuth,
  withoutHttpAuth,
  writeStoredAuth,
} from "../core/endpoint-auth-rows.js";
import { checkCredentialBinding } from "./credential-binding.js";
import { applyAuthChange, type EndpointAuthChange, endpointAuthJson } from "./endpoint-auth-input.js";
import { notFound, validation } from "./errors.js";
import type { RouteAccess } from "./route-access.js";
import { allowQuery, check, jsonBody, UUID_RE } from "./validation.js";

// A config's endpoint auth and custom headers on their own routes: read (credentials
// masked), change as a merge (one credential without the others), remove all of it.

export interface EndpointAuthDeps {
  pool: pg.Pool;
  secrets: ConfigSecrets;
  egress: EgressPolicy;
}

/**
 * The config's stored auth change applied and written; throws a 400 naming the field before
 * writing anything, also when a credential would go where it was not given for
 * (api/credential-binding.ts: a new token URL without the client secret, plain http).
 */
async function changeEndpointAuth(
  deps: EndpointAuthDeps,
  configId: string,
  change: EndpointAuthChange,
  prefix: string,
): Promise<StoredAuth> {
  // Under the config's row lock, as PUT /configs/{id} takes it: the endpoint checked is the
  // one the credentials are stored beside, whatever a concurrent PUT does.
  return inTransaction(deps.pool, async (client) => {
    const config = (
      await client.query<{ endpoint: string; destination: unknown }>(
        "SELECT endpoint, destination FROM configs WHERE id = $1::uuid FOR UPDATE",
        [configId],
      )
    ).rows[0];
    if (!config) throw notFound(`config ${configId} not found`);
    const type = destinationOf(config).type;
    if (type !== "http")
      throw validation(
        `endpoint auth applies to http destinations only; config ${configId} delivers to ${type} (its credential is set in destination, PUT /configs/{id})`,
      );
    const current = (await readStoredAuth(client, configId)) ?? EMPTY_AUTH;
    const next = applyAuthChange(current, change, {
      configId,
      secrets: deps.secrets,
      egress: deps.egress,
      prefix,
    });
    checkCredentialBinding({
      endpointBefore: config.endpoint,
      endpointAfter: config.endpoint,
      authBefore: current,
      authAfter: next,
      change,
      egress: deps.egress,
      prefix,
    });
    await writeStoredAuth(client, configId, next);
    return next;
  });
}

export function endpointAuthRoutes(access: RouteAccess, deps: EndpointAuthDeps): Router {
  const r = access.router();
  const configExists = async (id: string) => {
    const found =
      UUID_RE.test(id) &&
      (await deps.pool.query("SELECT 1 FROM configs WHERE id = $1::uuid", [id])).rowCount === 1;
    if (!found) throw notFound(`config ${id} not found`);
  };

  r.get("/configs/:id/auth", allowQuery(), async (req, res) => {
    const id = String(req.params.id);
    await configExists(id);
    res.json({ data: endpointAuthJson((await readStoredAuth(deps.pool, id)) ?? EMPTY_AUTH) });
  });

  r.patch("/configs/:id/auth", allowQuery(), jsonBody({ required: true }), async (req, res) => {
    const id = String(req.params.id);
    const change = check<EndpointAuthChange>("EndpointAuthChange", req.body);
    await configExists(id);
    res.json({ data: endpointAuthJson(await changeEndpointAuth(deps, id, change, "")) });
  });

  r.delete("/configs/:id/auth", allowQuery(), async (req, res) => {
    const id = String(req.params.id);
    await configExists(id);
    // A broker destination's credential is not endpoint auth: it stays.
    await inTransaction(deps.pool, async (client) => {
      const current = await readStoredAuth(client, id);
      if (current) await writeStoredAuth(client, id, withoutHttpAuth(current));
    });
    res.json({ data: {} });
  });

  return r;
}
