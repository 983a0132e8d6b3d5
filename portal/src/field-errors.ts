// Which form field an API validation message is about: the API names the field or path
// first (ajv's "/endpoint …", "filter: …", "auth.headers[0].name …"), so the message can be
// shown next to that field rather than at the top of the form.
export type FormField = "endpoint" | "name" | "eventTypes" | "filter" | "headers" | "auth" | "form";

const RULES: [RegExp, FormField][] = [
  [/^\/?(body\/)?filter\b|\bfilter\b/, "filter"],
  [/\bauth[./](headers)\b|\bheaders?\b/, "headers"],
  [/\bauth\b|\bbasic\b|\bbearer\b/, "auth"],
  [/\beventTypes\b|\bevent types?\b/, "eventTypes"],
  [/\bendpoint\b|\bURL\b/i, "endpoint"],
  [/^\/?(body\/)?name\b/, "name"],
];

export function fieldOf(message: string): FormField {
  for (const [pattern, field] of RULES) if (pattern.test(message)) return field;
  return "form";
}
