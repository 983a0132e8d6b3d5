// Tags of pushed statistics. Untagged (plain statsd) output carries EXTRA_TAGS inside
// the name as `.__key=value` (sorted by key), the encoding statsd pipelines fed by the
// reference already parse. The tagged format (USE_TAGGED_PUSH_STATS) sends DogStatsD
// `|#key:value` tags instead, and first passes each name through the mogrifiers:
// the first rule whose pattern matches rewrites the name and adds tags, both built
// from the match's groups (`$0`, `$1`, …).

export interface Mogrifier {
  /** The rule's name in TAGGED_PUSH_STATS_MOGRIFIERS. */
  rule: string;
  pattern: RegExp;
  /** The emitted name, with `$n` group references. */
  name: string;
  /** `[key, value template]`, in the order given. */
  tags: [string, string][];
}

/** Replaces `$0`, `$1`, … with the groups of `match` (missing groups become empty). */
export function expandGroups(template: string, match: RegExpExecArray): string {
  return template.replace(/\$(\d+)/g, (_, i: string) => match[Number(i)] ?? "");
}

/** Builds one rule; returns the problem as text when the parts cannot make a rule. */
export function compileMogrifier(
  rule: string,
  pattern: string | undefined,
  name: string | undefined,
  tags: string | undefined,
): Mogrifier | string {
  const v = `TAGGED_PUSH_STATS_MOGRIFIER_${rule}`;
  if (!pattern) return `${v}_PATTERN: required for the mogrifier ${rule}`;
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch (err) {
    return `${v}_PATTERN=${JSON.stringify(pattern)}: not a regular expression (${(err as Error).message})`;
  }
  if (!name) return `${v}_NAME: required for the mogrifier ${rule}`;
  const pairs: [string, string][] = [];
  for (const part of (tags ?? "").split(",")) {
    if (part.trim() === "") continue;
    const i = part.indexOf(":");
    if (i <= 0 || i === part.length - 1)
      return `${v}_TAGS: item ${JSON.stringify(part)} is not of the form <key>:<value>`;
    pairs.push([part.slice(0, i).trim(), part.slice(i + 1).trim()]);
  }
  return { rule, pattern: re, name, tags: pairs };
}

/** The name and tags (`key:value`) after the first matching rule; unchanged when none matches. */
export function mogrify(name: string, rules: readonly Mogrifier[]): { name: string; tags: string[] } {
  for (const r of rules) {
    const m = r.pattern.exec(name);
    if (!m) continue;
    return {
      name: expandGroups(r.name, m),
      tags: r.tags.map(([k, t]) => `${k}:${expandGroups(t, m)}`),
    };
  }
  return { name, tags: [] };
}

/** Tag keys and values may not break the line format (`:`, `|`, `,`, `#`, `@`, line ends). */
export function cleanTag(text: string): string {
  return text.replace(/[:|,#@\r\n]/g, "_");
}

/** `name.__k1=v1.__k2=v2` with the tags sorted by key (the untagged encoding). */
export function nameWithTags(name: string, tags: Readonly<Record<string, string>>): string {
  const keys = Object.keys(tags).sort();
  let out = name;
  for (const k of keys) out += `.__${cleanTag(k)}=${cleanTag(tags[k]!)}`;
  return out;
}
