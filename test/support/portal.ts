import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

// What the consumer portal's server-side tests share: a stand-in for the built page, and
// every route of the OpenAPI document made concrete with another tenant's ids.

/** A folder holding a minimal built page (index.html and one script), for --portal-assets-dir. */
export async function fixturePortalAssets(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "portal-assets-"));
  await writeFile(
    path.join(dir, "index.html"),
    '<!doctype html><html><head><title>portal fixture</title><script type="module" src="./app.js"></script></head><body></body></html>\n',
  );
  await writeFile(path.join(dir, "app.js"), "export {};\n");
  return dir;
}

export interface ConcreteCall {
  method: string;
  template: string;
  path: string;
}

/**
 * Every method of every path of `doc` that has a path parameter, filled from `values`
 * (keyed by the path's prefix, e.g. "/configs/"): a path with no values, or a parameter
 * without one, throws, so a new route fails the caller until it is given a resource.
 */
export function parameterisedCalls(
  doc: { paths: Record<string, Record<string, unknown>> },
  values: Record<string, Record<string, string>>,
  skip: (template: string) => boolean,
): ConcreteCall[] {
  const calls: ConcreteCall[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    if (!template.includes("{") || skip(template)) continue;
    const params = values[Object.keys(values).find((prefix) => template.startsWith(prefix)) ?? ""];
    if (!params) throw new Error(`no resource for ${template}: add it to the test`);
    const concrete = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = params[name];
      if (value === undefined) throw new Error(`${template}: no value for {${name}}`);
      return value;
    });
    for (const method of ["get", "post", "put", "patch", "delete"].filter((m) => m in item))
      calls.push({ method: method.toUpperCase(), template, path: concrete });
  }
  return calls;
}
