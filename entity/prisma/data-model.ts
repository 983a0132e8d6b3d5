import type { FieldInfo, FieldType } from "../server/entity-manager.js";

/** What the entity manager needs to know about one Prisma model. */
export interface ModelInfo {
  name: string;
  fields: FieldInfo[];
  /** Fields with @id or @unique, when known. */
  uniqueFields?: Set<string>;
  /** Where the rows are stored, when read from the client: what a plain SQL read needs. */
  table?: TableInfo;
}

export interface TableInfo {
  name: string;
  /** The model's own schema (multiSchema); else the connection's search path decides, as for Prisma's default. */
  schema?: string;
  /** Column of each scalar field, with the schema's `@db.` type when it states one (e.g. "Timestamptz(3)"). */
  columns: Map<string, ColumnInfo>;
}

export interface ColumnInfo {
  name: string;
  nativeType?: string;
  /** For an enum field: the member named by each stored value (`@map` renames them). */
  enumMembers?: Map<string, string>;
}

interface RuntimeField {
  name: string;
  kind: string;
  type: string;
  dbName?: string | null;
}

interface ClientInternals {
  _runtimeDataModel?: {
    models?: Record<string, { fields?: RuntimeField[]; dbName?: string | null; schema?: string | null }>;
  };
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
    const columns: TableInfo["columns"] = new Map();
    for (const f of model.fields ?? []) {
      if (f.kind !== "scalar" && f.kind !== "enum") continue; // relations are not columns
      const type: FieldType =
        f.kind === "enum" ? "Enum" : SCALARS.has(f.type) ? (f.type as FieldType) : "String";
      const uuid = scan?.uuids.has(f.name) === true;
      fields.push({ name: f.name, type, list: scan?.lists.has(f.name) ?? false, ...(uuid ? { uuid } : {}) });
      const nativeType = scan?.nativeTypes.get(f.name);
      const enumMembers = f.kind === "enum" && schema ? scanEnum(schema, f.type) : undefined;
      columns.set(f.name, {
        name: f.dbName || f.name,
        ...(nativeType ? { nativeType } : {}),
        ...(enumMembers ? { enumMembers } : {}),
      });
    }
    // Without the schema text, list columns and native types are unknown: no plain SQL reads.
    const table: TableInfo | undefined = scan
      ? { name: model.dbName || name, ...(model.schema ? { schema: model.schema } : {}), columns }
      : undefined;
    models.set(name, {
      name,
      fields,
      ...(scan ? { uniqueFields: scan.unique } : {}),
      ...(table ? { table } : {}),
    });
  }
  return models;
}

interface ModelScan {
  lists: Set<string>;
  unique: Set<string>;
  /** Fields with @db.Uuid. */
  uuids: Set<string>;
  /** The `@db.` attribute of each field that has one, e.g. "Timestamptz(3)". */
  nativeTypes: Map<string, string>;
}

function scanModel(schema: string, model: string): ModelScan | undefined {
  const block = new RegExp(`^model\\s+${model}\\s*\\{([\\s\\S]*?)^\\}`, "m").exec(schema);
  if (!block?.[1]) return undefined;
  const lists = new Set<string>();
  const unique = new Set<string>();
  const uuids = new Set<string>();
  const nativeTypes = new Map<string, string>();
  for (const line of block[1].split("\n")) {
    const m = /^\s*([A-Za-z_]\w*)\s+([A-Za-z_]\w*)(\[\])?\??(.*)$/.exec(line.replace(/\/\/.*$/, ""));
    if (!m?.[1]) continue;
    if (m[3]) lists.add(m[1]);
    if (/@id\b|@unique\b/.test(m[4] ?? "")) unique.add(m[1]);
    if (/@db\.Uuid\b/.test(m[4] ?? "")) uuids.add(m[1]);
    const native = /@db\.(\w+(?:\([^)]*\))?)/.exec(m[4] ?? "")?.[1];
    if (native) nativeTypes.set(m[1], native);
  }
  return { lists, unique, uuids, nativeTypes };
}

/** The members of an enum block by stored value: `member` or `member @map("stored")`, one per line. */
function scanEnum(schema: string, name: string): Map<string, string> | undefined {
  const block = new RegExp(`^enum\\s+${name}\\s*\\{([\\s\\S]*?)^\\}`, "m").exec(schema);
  if (!block?.[1]) return undefined;
  const members = new Map<string, string>();
  for (const line of block[1].split("\n")) {
    const m = /^\s*([A-Za-z_]\w*)\s*(?:@map\(\s*"((?:[^"\\]|\\.)*)"\s*\))?\s*(?:\/\/.*)?$/.exec(line);
    if (!m?.[1]) continue;
    try {
      members.set(m[2] === undefined ? m[1] : JSON.parse(`"${m[2]}"`), m[1]);
    } catch {
      return undefined; // an escape JSON does not share: the enum is left unknown
    }
  }
  return members.size > 0 ? members : undefined;
}
