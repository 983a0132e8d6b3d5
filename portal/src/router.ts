// Hash routes under /portal/: the server serves one index.html and never sees the route.
import { useEffect, useState } from "preact/hooks";

export type Route =
  | { name: "endpoints" }
  | { name: "new-endpoint" }
  | { name: "endpoint"; id: string }
  | { name: "edit-endpoint"; id: string }
  | { name: "delivery"; id: string }
  | { name: "unknown" };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [first, id, action] = parts;
  if (!first) return { name: "endpoints" };
  if (first === "endpoints" && id === "new" && !action) return { name: "new-endpoint" };
  if (first === "endpoints" && id && !action) return { name: "endpoint", id };
  if (first === "endpoints" && id && action === "edit") return { name: "edit-endpoint", id };
  if (first === "deliveries" && id && !action) return { name: "delivery", id };
  return { name: "unknown" };
}

export const href = {
  endpoints: () => "#/",
  newEndpoint: () => "#/endpoints/new",
  endpoint: (id: string) => `#/endpoints/${encodeURIComponent(id)}`,
  editEndpoint: (id: string) => `#/endpoints/${encodeURIComponent(id)}/edit`,
  delivery: (id: string) => `#/deliveries/${encodeURIComponent(id)}`,
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  return route;
}

export function go(to: string) {
  window.location.hash = to;
}
