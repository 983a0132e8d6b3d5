// Which form field an API validation message is about: the API names the field or path
// first (ajv's "/endpoint …", "filter: …", "auth.headers[0].name …"), so the message can be
// shown next to that field rather than at the top of the form.
export const OAUTH_FIELDS = ["tokenUrl", "clientId", "clientSecret", "scope", "audience"] as const;
export const TLS_FIELDS = ["certificate", "privateKey", "caBundle"] as const;
type AuthField = `oauth2.${(typeof OAUTH_FIELDS)[number]}` | `tls.${(typeof TLS_FIELDS)[number]}`;
export type FormField =
  | "endpoint"
  | "destination"
  | "name"
  | "eventTypes"
  | "filter"
  | "signatureHeaders"
  | "maxConcurrency"
  | "headers"
  | "auth"
  | "tls"
  | AuthField
  | "form";

const AUTH_FIELDS = new Set<string>([
  ...OAUTH_FIELDS.map((f) => `oauth2.${f}`),
  ...TLS_FIELDS.map((f) => `tls.${f}`),
]);
// "auth.tls.privateKey does not match … auth.tls.certificate": the first path named is the one at fault.
const AUTH_PATH = /\b(?:auth[./])?(oauth2|tls)[./](\w+)/;

const RULES: [RegExp, FormField][] = [
  [/\bsignatureHeaders\b/, "signatureHeaders"],
  [/\bmaxConcurrency\b/, "maxConcurrency"],
  // "endpoint: the config holds credentials (auth.headers, auth.bearer) and …" is about the URL.
  [/^\/?(body\/)?endpoint\b/, "endpoint"],
  // "missing required field \"destination.auth.token\"" is about the destination, not endpoint auth.
  [/\bdestination\b/, "destination"],
  [/^\/?(body\/)?filter\b|\bfilter\b/, "filter"],
  [/\bauth[./](headers)\b|\bheaders?\b/, "headers"],
  [/\b(?:auth[./])?tls\b/, "tls"],
  [/\bauth\b|\bbasic\b|\bbearer\b|\boauth2\b/, "auth"],
  [/\beventTypes\b|\bevent types?\b/, "eventTypes"],
  [/\bendpoint\b|\bURL\b/i, "endpoint"],
  [/^\/?(body\/)?name\b/, "name"],
];

export function fieldOf(message: string): FormField {
  const path = AUTH_PATH.exec(message);
  const field = path ? `${path[1]}.${path[2]}` : "";
  if (AUTH_FIELDS.has(field)) return field as AuthField;
  for (const [pattern, f] of RULES) if (pattern.test(message)) return f;
  return "form";
}
