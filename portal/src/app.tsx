// The shell: reads the token, bootstraps the session (GET /portal-sessions/current),
// applies its theme, and shows the screen of the current route, or the ended-session
// page as soon as any call answers 401.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { type ApiError, makeClient, must, onSessionEnd, type PortalSession, type SessionEnd } from "./api";
import { type Feature, Portal } from "./context";
import { DeliveryDetail } from "./delivery-detail";
import { EndpointDetail } from "./endpoint-detail";
import { EndpointForm } from "./endpoint-form";
import { EndpointsList } from "./endpoints-list";
import { when } from "./format";
import { ErrorText, NotFound, SessionEnded } from "./messages";
import { href, type Route, useRoute } from "./router";
import { takeTokens, watchTokenLinks } from "./session";
import { SessionSwitch } from "./session-switch";
import { applyTheme } from "./theme";

export function App() {
  const tokens = useMemo(takeTokens, []);
  const token = tokens.token;
  const [offered, setOffered] = useState(tokens.offered);
  const [end, setEnd] = useState<SessionEnd | null>(
    token ? null : { code: "UNAUTHORIZED", message: "no session token" },
  );
  const client = useMemo(() => (token ? makeClient(token) : null), [token]);
  const [session, setSession] = useState<PortalSession | null>(null);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const route = useRoute();
  const main = useRef<HTMLElement>(null);
  const firstRoute = useRef(true);
  // On a route change, focus moves to the new screen (as a page load would put it at the
  // top), so keyboard and screen reader users do not stay on a link that is gone.
  useEffect(() => {
    if (firstRoute.current) firstRoute.current = false;
    else main.current?.focus();
  }, [route]);

  useEffect(watchTokenLinks, []);
  useEffect(() => {
    onSessionEnd(setEnd);
    if (!client) return;
    must(client.GET("/portal-sessions/current")).then((s) => {
      applyTheme(s.theme);
      document.title = `Webhooks · ${s.tenant.name || s.tenant.uid}`;
      setSession(s);
    }, setError);
  }, [client]);

  if (end) return <SessionEnded end={end} />;
  if (!client || !session)
    return <main class="loading">{error ? <ErrorText error={error} /> : "Loading…"}</main>;
  if (offered)
    return <SessionSwitch current={session} offered={offered} onKeep={() => setOffered(undefined)} />;
  const features = new Set(session.features);
  const can = (feature: Feature) => features.has(feature);
  return (
    <Portal.Provider value={{ client, session, can }}>
      <header class="top">
        {session.theme?.logoUrl ? <img class="logo" src={session.theme.logoUrl} alt="" /> : null}
        <a class="brand" href={href.endpoints()}>
          {session.tenant.name || session.tenant.uid} · Webhooks
        </a>
        <span class="muted expires">Session until {when(session.expiresAt)}</span>
      </header>
      <main id="main" tabIndex={-1} ref={main}>
        <Screen route={route} can={can} />
      </main>
    </Portal.Provider>
  );
}

function Screen({ route, can }: { route: Route; can: (f: Feature) => boolean }) {
  switch (route.name) {
    case "endpoints":
      return <EndpointsList />;
    case "new-endpoint":
      return can("endpoints") ? <EndpointForm /> : <NotFound what="This page" />;
    // Keyed by id: moving to another endpoint or delivery starts its screen afresh, so
    // nothing of the previous one (a test result, a replay notice) follows the user there.
    case "endpoint":
      return <EndpointDetail key={route.id} id={route.id} />;
    case "edit-endpoint":
      return can("endpoints") ? <EndpointForm id={route.id} /> : <NotFound what="This page" />;
    case "delivery":
      return can("deliveries") ? (
        <DeliveryDetail key={route.id} id={route.id} />
      ) : (
        <NotFound what="This page" />
      );
    default:
      return <NotFound what="This page" />;
  }
}
