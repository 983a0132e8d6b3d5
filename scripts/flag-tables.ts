// The flag tables of docs/webhooks/flags.md, generated from the commands' own --help, so the
// manual cannot drift from the definitions in cmd/webhooks.ts (test/tooling/flag-tables.test.ts
// fails when it does). The program builder is not exported, so the help text of the built
// command is parsed: commander prints one option a line, `  <flags>  <description> (<extras>)`.
//
//   node dist/scripts/flag-tables.js           print the tables
//   node dist/scripts/flag-tables.js --write   replace them in docs/webhooks/flags.md
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { fromRoot, repoRoot } from "../common/paths.js";

export const FLAGS_PAGE = "docs/webhooks/flags.md";
export const BEGIN = "<!-- flags:begin -->";
export const END = "<!-- flags:end -->";

/** One option as --help shows it. */
export interface HelpOption {
  flags: string;
  description: string;
  defaultValue?: string;
  env?: string;
  choices?: string[];
}

/** The help text of `webhooks <sub...> --help`, from the built command. */
export async function helpText(sub: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [fromRoot("dist/cmd/webhooks.js"), ...sub, "--help"],
    {
      cwd: repoRoot,
      encoding: "utf8",
    },
  );
  return stdout;
}

/** The options of one help text, `--help` itself left out. */
export function parseOptions(help: string): HelpOption[] {
  const lines = help.split("\n");
  const options: { flags: string; text: string }[] = [];
  for (const line of lines.slice(lines.indexOf("Options:") + 1)) {
    if (line.trim() === "") break; // the Commands section, if any, follows a blank line
    const start = /^ {2}(-\S(?:\S| (?! ))*)(?: {2,}(.*))?$/.exec(line);
    if (start) options.push({ flags: start[1] ?? "", text: start[2] ?? "" });
    else if (options.length > 0) {
      const last = options[options.length - 1];
      if (last) last.text = `${last.text} ${line.trim()}`.trim(); // a description wrapped by commander
    }
  }
  return options.filter((o) => o.flags !== "-h, --help").map((o) => withExtras(o.flags, o.text));
}

/**
 * Splits commander's trailing `(choices: …, default: …, preset: …, env: …)` from the
 * description; a description may write its own `(default: …)` before commander's group.
 */
function withExtras(flags: string, text: string): HelpOption {
  const option: HelpOption = { flags, description: text };
  for (let group = lastGroup(option.description); group; group = lastGroup(option.description)) {
    option.description = option.description.slice(0, group.start).trimEnd();
    const keys = [...group.body.matchAll(/(?:^|, )(choices|default|preset|env): /g)];
    keys.forEach((key, i) => {
      const value = group.body.slice(
        (key.index ?? 0) + key[0].length,
        keys[i + 1]?.index ?? group.body.length,
      );
      if (key[1] === "default") option.defaultValue ??= displayDefault(value);
      else if (key[1] === "env") option.env ??= value;
      else if (key[1] === "choices") option.choices ??= value.split(", ").map(unquote);
    });
  }
  return option;
}

/** The parenthesised group ending the text, when it is one of commander's extras. */
function lastGroup(text: string): { start: number; body: string } | undefined {
  if (!text.endsWith(")")) return undefined;
  let depth = 0;
  for (let i = text.length - 1; i >= 0; i--) {
    if (text[i] === ")") depth++;
    else if (text[i] === "(" && --depth === 0) {
      const body = text.slice(i + 1, -1);
      return /^(choices|default|preset|env): /.test(body) ? { start: i, body } : undefined;
    }
  }
  return undefined;
}

/** Paths under the checkout are shown relative to it, so the table does not depend on where it was made. */
function displayDefault(value: string): string {
  return unquote(value.split(`${repoRoot}/`).join(""));
}

function unquote(value: string): string {
  return /^".*"$/.test(value) ? value.slice(1, -1) : value;
}

/** Markdown cell text: pipes escaped, `<placeholders>` outside code spans put in one, so no renderer reads them as HTML. */
function cell(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/<[^<>\s]+>[^\s,;)]*/g, (m) => `\`${m}\``)))
    .join("")
    .replaceAll("|", "\\|");
}

function row(o: HelpOption, note: string): string {
  const meaning = [
    o.description,
    o.choices ? `one of ${o.choices.map((c) => `\`${c}\``).join(", ")}` : "",
    note,
  ]
    .filter(Boolean)
    .join("; ");
  // A literal default in a code span; a described one ("embedded PGlite database") as text.
  const def =
    o.defaultValue === undefined
      ? ""
      : o.defaultValue.includes(" ")
        ? cell(o.defaultValue)
        : `\`${o.defaultValue}\``;
  const env = o.env ? `\`${o.env}\`` : "";
  return `| \`${o.flags.replaceAll("|", "\\|")}\` | ${def} | ${env} | ${cell(meaning)} |`;
}

function table(rows: string[]): string {
  return ["| flag | default | env | meaning |", "|---|---|---|---|", ...rows].join("\n");
}

/** The block that goes between the markers. The four help texts are read at once. */
export async function generateFlagTables(
  help: (sub: string[]) => Promise<string> = helpText,
): Promise<string> {
  const [serveHelp, workerHelp, rekeyHelp, newKeyHelp] = await Promise.all([
    help(["serve"]),
    help(["worker"]),
    help(["secrets", "rekey"]),
    help(["secrets", "new-key"]),
  ]);
  const serve = parseOptions(serveHelp);
  const worker = parseOptions(workerHelp);
  const inWorker = new Set(worker.map((o) => o.flags));
  const inServe = new Set(serve.map((o) => o.flags));
  const delivery = [
    ...serve.map((o) => row(o, inWorker.has(o.flags) ? "" : "`serve` only")),
    ...worker.filter((o) => !inServe.has(o.flags)).map((o) => row(o, "`worker` only")),
  ];
  const sections = [
    "`serve` and `worker`:",
    table(delivery),
    "`secrets rekey`:",
    table(parseOptions(rekeyHelp).map((o) => row(o, ""))),
    "`secrets new-key`:",
    table(parseOptions(newKeyHelp).map((o) => row(o, ""))),
  ];
  return `${BEGIN}\n<!-- generated by scripts/flag-tables.ts from the commands' --help; do not edit by hand -->\n\n${sections.join("\n\n")}\n\n${END}`;
}

/** The block between the markers of a page, markers included. */
export function committedBlock(page: string): string {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${FLAGS_PAGE} lacks the ${BEGIN} … ${END} markers`);
  return page.slice(begin, end + END.length);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const block = await generateFlagTables();
  if (process.argv.includes("--write")) {
    const file = fromRoot(FLAGS_PAGE);
    const page = readFileSync(file, "utf8");
    writeFileSync(file, page.replace(committedBlock(page), block));
    console.log(`wrote the flag tables of ${FLAGS_PAGE}`);
  } else {
    console.log(block);
  }
}
