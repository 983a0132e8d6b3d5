/** A URL with its user information (user, password or token) removed: what may appear in logs and messages. */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1");
}
