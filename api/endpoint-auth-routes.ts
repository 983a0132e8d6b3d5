import { Router } from "express";
import type pg from "pg";
import type { ConfigSecrets } from "../core/config-secrets.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import { EMPTY_AUTH, readStoredAuth, type StoredAuth, writeStoredAuth } from "../core/endpoint-auth-rows.js";
import { checkCredentialBinding } from "./credential-binding.js";
import { applyAuthChange, type EndpointAuthChange, endpointAuthJson } from "./endpoint-auth-input.js";
import { notFound } from "./errors.js";
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
  config: { id: string; endpoint: string },
  change: EndpointAuthChange,
  prefix: string,
): Promise<StoredAuth> {
  const current = (await readStoredAuth(deps.pool, config.id)) ?? EMPTY_AUTH;
  const next = applyAuthChange(current, change, {
    configId: config.id,
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
  await writeStoredAuth(deps.pool, config.id, next);
  return next;
}

export function endpointAuthRoutes(deps: EndpointAuthDeps): Router {
  const r = Router();
  /** The config's id and endpoint (what its credentials are bound to), or NOT_FOUND. */
  const configExists = async (id: string) => {
    const found = UUID_RE.test(id)
      ? (
          await deps.pool.query<{ id: string; endpoint: string }>(
            "SELECT id, endpoint FROM configs WHERE id = $1::uuid",
            [id],
          )
        ).rows[0]
      : undefined;
    if (!found) throw notFound(`config ${id} not found`);
    return found;
  };

  r.get("/configs/:id/auth", allowQuery(), async (req, res) => {
    const id = String(req.params.id);
    await configExists(id);
    res.json({ data: endpointAuthJson((await readStoredAuth(deps.pool, id)) ?? EMPTY_AUTH) });
  });

  r.patch("/configs/:id/auth", allowQuery(), jsonBody({ required: true }), async (req, res) => {
    const id = String(req.params.id);
    const change = check<EndpointAuthChange>("EndpointAuthChange", req.body);
    const config = await configExists(id);
    res.json({ data: endpointAuthJson(await changeEndpointAuth(deps, config, change, "")) });
  });

  r.delete("/configs/:id/auth", allowQuery(), async (req, res) => {
    const id = String(req.params.id);
    await configExists(id);
    await writeStoredAuth(deps.pool, id, EMPTY_AUTH);
    res.json({ data: {} });
  });

  return r;
}
