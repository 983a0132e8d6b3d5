import { randomUUID } from "node:crypto";
import type { ConfigSecrets } from "../core/config-secrets.js";
import type { Destination } from "../core/destinations.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import { EMPTY_AUTH, type StoredAuth } from "../core/endpoint-auth-rows.js";
import type { Placement } from "./config-store.js";
import { checkCredentialBinding } from "./credential-binding.js";
import { destinationSecretToStore, endpointFor, type ReadDestination } from "./destination-input.js";
import { applyAuthChange, type EndpointAuthChange } from "./endpoint-auth-input.js";
import { validation } from "./errors.js";

// Where a written config delivers: its endpoint, its destination and the credentials
// stored for them (config_auth), decided together. HTTP keeps its endpoint auth; a broker
// destination takes its own credential and no endpoint auth, and a config moving from
// one to the other drops what the new one does not use.

/** What a config body says about its placement. */
export interface PlacementInput {
  endpoint: string | undefined;
  /** Absent: HTTP on create, the stored destination on update. */
  destination: ReadDestination | undefined;
  auth: EndpointAuthChange | undefined;
}

interface PlacementDeps {
  secrets: ConfigSecrets;
  egress: EgressPolicy;
}

const HTTP: ReadDestination = { destination: { type: "http" }, given: {} };

function refuseAuthFor(destination: Destination, auth: EndpointAuthChange | undefined): void {
  if (auth && destination.type !== "http")
    throw validation(
      `auth: endpoint auth applies to http destinations only; a ${destination.type} destination takes its credential in destination`,
    );
}

/** A new config's placement, checked before anything is written; `authFor` seals its credentials for the new id. */
export function newPlacement(
  deps: PlacementDeps,
  input: PlacementInput,
): { endpoint: string; destination: Destination; authFor?: (configId: string) => StoredAuth } {
  const read = input.destination ?? HTTP;
  const endpoint = endpointFor(read.destination, input.endpoint, deps.egress);
  refuseAuthFor(read.destination, input.auth);
  const authOf = (configId: string): StoredAuth => {
    const auth = input.auth
      ? applyAuthChange(EMPTY_AUTH, input.auth, { ...deps, configId, prefix: "auth." })
      : EMPTY_AUTH;
    return { ...auth, destination_secret: destinationSecretToStore(read, null, { ...deps, configId }) };
  };
  // Checked (sealed for a placeholder id, then discarded) before the config is written.
  const precheck = authOf(randomUUID());
  checkCredentialBinding({
    endpointBefore: null,
    endpointAfter: endpoint,
    authBefore: EMPTY_AUTH,
    authAfter: precheck,
    change: input.auth,
    egress: deps.egress,
    prefix: "auth.",
  });
  const needsRow = input.auth !== undefined || precheck.destination_secret !== null;
  return { endpoint, destination: read.destination, ...(needsRow ? { authFor: authOf } : {}) };
}

/** An update's placement from what is stored (under the config's row lock). */
export function replacedPlacement(
  deps: PlacementDeps & { configId: string },
  input: PlacementInput,
  stored: { endpoint: string; destination: Destination; auth: StoredAuth },
): Placement {
  const read = input.destination ?? { destination: stored.destination, given: {} };
  const { destination } = read;
  const endpoint = endpointFor(destination, input.endpoint, deps.egress);
  refuseAuthFor(destination, input.auth);
  if (destination.type !== "http") {
    const sealed = destinationSecretToStore(
      read,
      { destination: stored.destination, sealed: stored.auth.destination_secret },
      deps,
    );
    // Endpoint auth goes: a broker destination never sends it.
    return { endpoint, destination, auth: { ...EMPTY_AUTH, destination_secret: sealed } };
  }
  let auth = input.auth ? applyAuthChange(stored.auth, input.auth, { ...deps, prefix: "auth." }) : undefined;
  // Back to HTTP: the broker's credential goes.
  if (stored.auth.destination_secret !== null) auth = { ...(auth ?? stored.auth), destination_secret: null };
  checkCredentialBinding({
    endpointBefore: stored.endpoint,
    endpointAfter: endpoint,
    authBefore: stored.auth,
    authAfter: auth ?? stored.auth,
    change: input.auth,
    egress: deps.egress,
    prefix: "auth.",
  });
  return { endpoint, destination, auth };
}
