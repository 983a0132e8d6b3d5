// The page's plain messages: not found, errors, the ended session. Never a stack trace.
import type { ApiError, SessionEnd } from "./api";
import { href } from "./router";

export function NotFound({ what }: { what: string }) {
  return (
    <section class="notice" aria-labelledby="not-found-title">
      <h1 id="not-found-title">Not found</h1>
      <p>{what} does not exist, or it is not yours.</p>
      <p>
        <a href={href.endpoints()}>Back to your endpoints</a>
      </p>
    </section>
  );
}

export function ErrorText({ error }: { error: ApiError | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error.message}
    </p>
  );
}

/** A screen's load failure: 404 reads "not found", anything else its message. */
export function LoadFailure({ error, what }: { error: ApiError; what: string }) {
  if (error.status === 404) return <NotFound what={what} />;
  return <ErrorText error={error} />;
}

const TITLES: Record<string, string> = {
  SESSION_EXPIRED: "This session has expired",
  SESSION_REVOKED: "This session was revoked",
};

export function SessionEnded({ end }: { end: SessionEnd }) {
  return (
    <main class="ended" aria-labelledby="ended-title">
      <h1 id="ended-title">{TITLES[end.code] ?? "This link is not valid"}</h1>
      <p>
        For your security, portal links work for a limited time. Open the portal again from the application
        that sent you here to get a new link.
      </p>
      <p class="muted" data-code={end.code}>
        Reason: {end.code}
      </p>
    </main>
  );
}
