// The portal token arrives in the URL fragment (#token=…) so it never reaches server logs
// or Referer headers; it is kept in sessionStorage (this tab only) and removed from the
// address bar at once, so a copied URL or a screenshot does not carry it.
const KEY = "portal-token";

/** The token of this tab: taken from the fragment when there is one, else the stored one. */
export function takeToken(): string | null {
  const found = /^#token=([^&]+)/.exec(window.location.hash);
  if (found?.[1]) {
    sessionStorage.setItem(KEY, decodeURIComponent(found[1]));
    history.replaceState(null, "", `${window.location.pathname}${window.location.search}#/`);
  }
  return sessionStorage.getItem(KEY);
}
