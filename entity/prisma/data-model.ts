import type { FieldInfo, FieldType } from "../server/entity-manager.js";

/** What the entity manager needs to know about one Prisma model. */
export interface ModelInfo {
  name: string;
  fields: FieldInfo[];
  /** Fields with @id or @unique, when known. */
  uniqueFields?: Set<string>;
}

interface RuntimeField {
  name: string;
  kind: string;
  type: string;
}

interface ClientInternals {
  _runtimeDataModel?: { models?: Record<string, { fields?: RuntimeField[] }> };
  _engineConfig?: { inlineSchema?: string };
}

const SCALARS = new Set([
  "String",
  "Int",
  "BigInt",
  "Float",
  "Decimal",
  "Boolean",
  "DateTime",
  "Json",
  "Bytes",
]);

/**
 * Reads the models of a generated Prisma 7 client. Names and scalar types come
 * from the client's runtime data model; list columns and @id/@unique from the
 * schema text embedded in the client (a line scan of each model block: one
 * field per line is how `prisma format` writes it). Both are client internals,
 * so every binding can also state its field types explicitly.
 */
export function readDataModel(client: unknown): Map<string, ModelInfo> {
  const internals = client as ClientInternals;
  const runtime = internals._runtimeDataModel?.models ?? {};
  const schema = internals._engineConfig?.inlineSchema;
  const models = new Map<string, ModelInfo>();
  for (const [name, model] of Object.entries(runtime)) {
    const scan = schema ? scanModel(schema, name) : undefined;
    const fields: FieldInfo[] = [];
    for (const f of model.fields ?? []) {
      if (f.kind !== "scalar" && f.kind !== "enum") continue; // relations are not columns
      const type: FieldType =
        f.kind === "enum" ? "Enum" : SCALARS.has(f.type) ? (f.type as FieldType) : "String";
      const uuid = scan?.uuids.has(f.name) === true;
      fields.push({ name: f.name, type, list: scan?.lists.has(f.name) ?? false, ...(uuid ? { uuid } : {}) });
    }
    models.set(name, { name, fields, ...(scan ? { uniqueFields: scan.unique } : {}) });
  }
  return models;
}

interface ModelScan {
  lists: Set<string>;
  unique: Set<string>;
  /** Fields with @db.Uuid. */
  uuids: Set<string>;
}

function scanModel(schema: string, model: string): ModelScan | undefined {
  const block = new RegExp(`^model\\s+${model}\\s*\\{([\\s\\S]*?)^\\}`, "m").exec(schema);
  if (!block?.[1]) return undefined;
  const lists = new Set<string>();
  const unique = new Set<string>();
  const uuids = new Set<string>();
  for (const line of block[1].split("\n")) {
    const m = /^\s*([A-Za-z_]\w*)\s+([A-Za-z_]\w*)(\[\])?\??(.*)$/.exec(line.replace(/\/\/.*$/, ""));
    if (!m?.[1]) continue;
    if (m[3]) lists.add(m[1]);
    if (/@id\b|@unique\b/.test(m[4] ?? "")) unique.add(m[1]);
    if (/@db\.Uuid\b/.test(m[4] ?? "")) uuids.add(m[1]);
  }
  return { lists, unique, uuids };
}
