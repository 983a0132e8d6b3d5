// What a portal session may be granted. Which feature each route needs is the route's
// rule in api/route-access.ts (a route without one is 403 for every portal session).

export const PORTAL_FEATURES = [
  "endpoints",
  "deliveries",
  "replay",
  "recovery",
  "test-events",
  "secrets",
] as const;
export type PortalFeature = (typeof PORTAL_FEATURES)[number];

/** A session's features when its creator names none: least privilege, so not the signing secret. */
export const DEFAULT_PORTAL_FEATURES: PortalFeature[] = PORTAL_FEATURES.filter((f) => f !== "secrets");
