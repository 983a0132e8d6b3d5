// The portal token arrives in the URL fragment (#token=…) so it never reaches server logs
// or Referer headers; it is kept in sessionStorage (this tab only) and removed from the
// address bar at once, so a copied URL or a screenshot does not carry it.
//
// A link that brings another session's token into a tab that holds one is only offered:
// the page asks before it replaces the session, so a link planted by someone else cannot
// silently put the user into a session of another tenant (whose endpoints would then
// receive what the user sets up).
const KEY = "portal-token";

export interface Tokens {
  /** The session this tab runs under. */
  token: string | null;
  /** Another session's token that the link brought, waiting for the user's word. */
  offered?: string;
}

/** The tokens of this tab: the fragment's when the tab has none (or the same), else both. */
export function takeTokens(): Tokens {
  const found = /^#token=([^&]+)/.exec(window.location.hash);
  const stored = sessionStorage.getItem(KEY);
  if (!found?.[1]) return { token: stored };
  history.replaceState(null, "", `${window.location.pathname}${window.location.search}#/`);
  const brought = decodeURIComponent(found[1]);
  if (stored === null || stored === brought) {
    sessionStorage.setItem(KEY, brought);
    return { token: brought };
  }
  return { token: stored, offered: brought };
}

/** The user chose the offered session: it replaces this tab's. */
export function switchSession(token: string): void {
  sessionStorage.setItem(KEY, token);
  window.location.reload();
}

/** A link with a token followed while the page is open (a fragment change, no load): read it as a load would. */
export function watchTokenLinks(): () => void {
  const changed = () => {
    if (window.location.hash.startsWith("#token=")) window.location.reload();
  };
  window.addEventListener("hashchange", changed);
  return () => window.removeEventListener("hashchange", changed);
}
