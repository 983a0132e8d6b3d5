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

/** What each way a session ends says: a title and why, without blaming the user for the operator's act. */
const ENDS: Record<string, { title: string; why: string }> = {
  SESSION_EXPIRED: {
    title: "This session has expired",
    why: "For your security, portal links work for a limited time.",
  },
  SESSION_REVOKED: {
    title: "This session was revoked",
    why: "The application that sent you here ended this session before its time, so the link no longer works.",
  },
};
const INVALID = {
  title: "This link is not valid",
  why: "The link is incomplete, or it was not made for this portal.",
};

export function SessionEnded({ end }: { end: SessionEnd }) {
  const { title, why } = ENDS[end.code] ?? INVALID;
  return (
    <main class="ended" aria-labelledby="ended-title">
      <h1 id="ended-title">{title}</h1>
      <p>{why}</p>
      <p>Open the portal again from the application that sent you here to get a new link.</p>
      <p class="muted" data-code={end.code}>
        Reason: {end.code}
      </p>
    </main>
  );
}
