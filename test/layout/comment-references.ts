// What comments point at: the repository files they name and the specification they
// cite. Comments are read with the TypeScript scanner (so a `//` inside a string or a
// regular expression is not one); a file path is either something with a slash and a
// known extension, resolved from the repository root or from the commenting file's
// folder, or a bare file name such as `reconciliation.ts`, which some file of the
// repository must carry. The specification the code was written against lives outside
// the repository: a comment that cites it must point at docs/spec-rules.md instead.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/** Folders that runs write (ignored by git): a comment may name a file there before it exists. */
const WRITTEN = ["test-output/", "bench/results/"];
/** Folders never scanned nor counted as holding referenced files: built, fetched or generated. */
const SKIPPED = new Set([
  "node_modules",
  "dist",
  "generated",
  "gen",
  ".git",
  ".tools",
  ".data",
  "test-output",
]);
const SCANNED = /\.(?:ts|tsx|mjs|cjs)$/;
const EXT = "ts|tsx|js|mjs|cjs|json|sh|md|sql|proto|ya?ml|toml|prisma|py|go|html|css";
// A path with at least one slash (`./` and `../` allowed first), or a bare source file name.
const SLASHED = new RegExp(
  `(?<![\\w@./-])((?:\\.{1,2}/)*(?:[\\w@-][\\w.@-]*/)+[\\w.-]+\\.(?:${EXT}))(?![\\w/-])`,
  "g",
);
const BARE = /(?<![\w@./-])([\w-][\w.-]*\.(?:ts|tsx|mjs|cjs))(?![\w/-])/g;
const URL_LIKE = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi;
// "the spec", "spec rule 12", "specification", "../shared/spec" (each must name docs/spec-rules.md);
// not mocha's "spec reporter".
const SPEC_CITATION = /\bspec(?:ification)?s?\b(?!\s+(?:reporter|output))|shared\/spec/i;
export const SPEC_RULES = "docs/spec-rules.md";
const SPEC_ANCHOR = /docs\/spec-rules\.md#([\w-]+)/g;

export interface Comment {
  /** Position of the comment's first character in the file. */
  pos: number;
  text: string;
}

export interface Finding {
  /** `file:line`, the file relative to the root. */
  where: string;
  /** The path as written, or what the comment cites. */
  what: string;
}

/** Every comment of a source file, in order. */
export function commentsOf(fileName: string, text: string): Comment[] {
  const kind = fileName.endsWith(".tsx")
    ? ts.ScriptKind.TSX
    : /\.[cm]?js$/.test(fileName)
      ? ts.ScriptKind.JS
      : ts.ScriptKind.TS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
  const comments: Comment[] = [];
  // Between two tokens there is only whitespace and comments: read that trivia for each leaf.
  const trivia = (from: number, to: number) => {
    let i = from;
    while (i < to) {
      if (text.startsWith("//", i)) {
        const end = text.indexOf("\n", i);
        const stop = end < 0 || end > to ? to : end;
        // Consecutive line comments are one comment, so a sentence may run over lines.
        const last = comments.at(-1);
        if (
          last?.text.startsWith("//") &&
          /^[ \t]*\r?\n[ \t]*$/.test(text.slice(last.pos + last.text.length, i))
        )
          last.text = text.slice(last.pos, stop);
        else comments.push({ pos: i, text: text.slice(i, stop) });
        i = stop;
      } else if (text.startsWith("/*", i)) {
        const end = text.indexOf("*/", i + 2);
        const stop = end < 0 ? to : end + 2;
        comments.push({ pos: i, text: text.slice(i, stop) });
        i = stop;
      } else i++;
    }
  };
  const visit = (node: ts.Node) => {
    const children = node.getChildren(source).filter((c) => !ts.isJSDoc(c));
    if (children.length === 0 || node.kind === ts.SyntaxKind.JsxText) {
      if (node.kind !== ts.SyntaxKind.JsxText) trivia(node.pos, node.getStart(source));
      return;
    }
    for (const child of children) visit(child);
  };
  visit(source);
  // A file's last comments are the trivia of its end-of-file token (a leaf like the others).
  return comments;
}

/** Paths a comment names (URLs left out), each with its offset in the comment. */
export function pathsIn(comment: string): { path: string; offset: number }[] {
  const text = comment.replace(URL_LIKE, (url) => " ".repeat(url.length));
  const found: { path: string; offset: number }[] = [];
  for (const m of text.matchAll(SLASHED)) found.push({ path: m[1]!, offset: m.index! });
  for (const m of text.matchAll(BARE)) found.push({ path: m[1]!, offset: m.index! });
  return found.sort((a, b) => a.offset - b.offset);
}

/** Whether a comment cites the specification without pointing at docs/spec-rules.md. */
export const citesSpecOutside = (comment: string): boolean =>
  SPEC_CITATION.test(comment) && !comment.includes(SPEC_RULES);

/** The repository's files (relative to the root), built and fetched folders left out. */
export function repositoryFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name) && !entry.name.startsWith("dist-")) walk(rel);
      } else files.push(rel);
    }
  };
  walk("");
  return files;
}

/**
 * Whether `named` (as a comment in `file` writes it) is a file of the repository: from the
 * root, from the file's folder, or, for a module named by its compiled `.js`, its source.
 */
export function resolves(root: string, file: string, named: string, baseNames: ReadonlySet<string>): boolean {
  if (!named.includes("/")) return baseNames.has(named);
  if (WRITTEN.some((folder) => named.startsWith(folder))) return true;
  const dir = path.dirname(file);
  const bases = named.startsWith(".") ? [dir] : [".", dir];
  const sources = [named];
  if (/\.js$/.test(named)) {
    const source = named.replace(/^dist\//, "");
    sources.push(source.replace(/\.js$/, ".ts"), source.replace(/\.js$/, ".tsx"));
  }
  return bases.some((base) => sources.some((s) => existsSync(path.join(root, base, s))));
}

/** The anchors of a Markdown file's headings, as GitHub makes them. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6}\s+(.+)$/gm))
    anchors.add(
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\w\s-]/g, "")
        .replace(/\s/g, "-"),
    );
  return anchors;
}

/**
 * Every comment of the repository's sources that names a missing file, a missing section of
 * docs/spec-rules.md, or cites the specification without pointing there.
 */
export function staleReferences(root: string): Finding[] {
  const files = repositoryFiles(root);
  const baseNames = new Set(files.map((f) => path.basename(f)));
  const rules = path.join(root, SPEC_RULES);
  const anchors = existsSync(rules) ? headingAnchors(readFileSync(rules, "utf8")) : new Set<string>();
  const findings: Finding[] = [];
  for (const file of files.filter((f) => SCANNED.test(f) && !f.endsWith(".d.ts"))) {
    const text = readFileSync(path.join(root, file), "utf8");
    const lineOf = (pos: number) => text.slice(0, pos).split("\n").length;
    for (const comment of commentsOf(file, text)) {
      for (const { path: named, offset } of pathsIn(comment.text))
        if (!resolves(root, file, named, baseNames))
          findings.push({ where: `${file}:${lineOf(comment.pos + offset)}`, what: named });
      for (const m of comment.text.matchAll(SPEC_ANCHOR))
        if (!anchors.has(m[1]!))
          findings.push({ where: `${file}:${lineOf(comment.pos + m.index!)}`, what: `no section #${m[1]}` });
      if (citesSpecOutside(comment.text)) {
        const at = comment.text.search(SPEC_CITATION);
        const cited = comment.text.slice(at, at + 40).split("\n")[0]!;
        findings.push({
          where: `${file}:${lineOf(comment.pos + at)}`,
          what: `cites the specification: "${cited}"`,
        });
      }
    }
  }
  return findings;
}
