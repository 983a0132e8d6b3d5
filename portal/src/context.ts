// What every screen needs: the API client and the session (tenant, features).
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Client, PortalSession } from "./api";

export type Feature = "endpoints" | "deliveries" | "replay" | "recovery" | "test-events" | "secrets";

export interface PortalContext {
  client: Client;
  session: PortalSession;
  can: (feature: Feature) => boolean;
}

export const Portal = createContext<PortalContext | null>(null);

export function usePortal(): PortalContext {
  const value = useContext(Portal);
  if (!value) throw new Error("usePortal outside the portal");
  return value;
}
