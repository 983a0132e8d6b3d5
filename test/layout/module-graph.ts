// The project's own import graph, read with the TypeScript compiler: every
// static import/export and every `import("…")` with a literal specifier,
// type-only ones included (a type circle is still a circle for a reader).
import path from "node:path";
import ts from "typescript";

export interface ModuleGraph {
  root: string;
  /** file (relative to root) → files it imports (relative to root) */
  edges: Map<string, Set<string>>;
}

const generated = [`${path.sep}generated${path.sep}`, `${path.sep}proto${path.sep}gen${path.sep}`];

export function readModuleGraph(root: string): ModuleGraph {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(root, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (!config) throw new Error(`cannot read ${root}/tsconfig.json`);
  const files = new Set(config.fileNames.filter((f) => !generated.some((g) => f.includes(g))));
  const edges = new Map<string, Set<string>>();
  for (const file of files) {
    const source = ts.createSourceFile(file, ts.sys.readFile(file) ?? "", ts.ScriptTarget.Latest, true);
    const targets = new Set<string>();
    const add = (specifier: string) => {
      if (!specifier.startsWith(".")) return;
      const resolved = ts.resolveModuleName(specifier, file, config.options, ts.sys).resolvedModule;
      if (resolved && files.has(resolved.resolvedFileName))
        targets.add(path.relative(root, resolved.resolvedFileName));
    };
    const visit = (node: ts.Node) => {
      if (
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
        node.moduleSpecifier &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        add(node.moduleSpecifier.text);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] &&
        ts.isStringLiteralLike(node.arguments[0])
      ) {
        add(node.arguments[0].text);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    edges.set(path.relative(root, file), targets);
  }
  return { root, edges };
}

/** The same graph with each file replaced by its folder; edges inside a folder dropped. */
export function folderGraph(graph: ModuleGraph): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph.edges) {
    const from = path.dirname(file);
    if (!folders.has(from)) folders.set(from, new Set());
    for (const target of targets) {
      const to = path.dirname(target);
      if (to !== from) folders.get(from)?.add(to);
    }
  }
  return folders;
}

/** Strongly connected components with more than one member (Tarjan), each sorted. */
export function circles(edges: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of edges.get(node) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!index.has(node)) connect(node);
  return found;
}
