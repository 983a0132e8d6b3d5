import pg from "pg";
import type { FieldInfo, Row } from "../server/entity-manager.js";
import type { ColumnInfo, TableInfo } from "./data-model.js";

/** The part of a pg pool the reader uses. */
export interface SqlPool {
  query(config: pg.QueryConfig & { rowMode: "array" }): Promise<{ rows: unknown[][] }>;
}

/** How one column's text-protocol value becomes the value Prisma gives the field; undefined: it cannot. */
type Convert = (value: unknown) => unknown;

const DECLINE = Symbol("decline");

const PG_TIMESTAMP = 1114;
const PG_TIMESTAMPTZ = 1184;
// Timestamps stay text: pg would read a timestamp without time zone in local time; they are converted below.
const TYPES = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === PG_TIMESTAMP || oid === PG_TIMESTAMPTZ
      ? (text: string) => text
      : pg.types.getTypeParser(oid, format ?? "text")) as typeof pg.types.getTypeParser,
};

/**
 * A model's list query in plain SQL on the pool Prisma's adapter runs on: the
 * same statement Prisma sends (equality filters, ordered by the identifier,
 * LIMIT/OFFSET), with rows built as Prisma builds them. Prisma's query
 * interpreter and row mapping cost about 6 µs a row, more than the rest of a
 * list request; this costs well under 1 µs.
 *
 * Only what converts exactly is read here: a model whose every field is a
 * String, Enum, Int, Boolean, Json, String[] or DateTime of millisecond
 * precision at most; equality filters on the scalar fields of those types but
 * Json, with a non-null value of the field's kind. `list` answers undefined for anything else (another filter, a value
 * not as expected, any database error), and the caller asks Prisma, so answers
 * and errors are always Prisma's.
 */
export class SqlListReader {
  private readonly select: string;
  private readonly order: string;
  private readonly converts: Convert[];
  private readonly names: string[];

  private constructor(
    private readonly pool: SqlPool,
    private readonly columns: ReadonlyMap<string, string>,
    private readonly filterable: ReadonlyMap<string, Filter>,
    fields: readonly FieldInfo[],
    table: TableInfo,
    identifier: string,
    converts: Convert[],
  ) {
    const from = table.schema ? `${quote(table.schema)}.${quote(table.name)}` : quote(table.name);
    this.names = fields.map((f) => f.name);
    this.select = `SELECT ${fields.map((f) => quote(columns.get(f.name)!)).join(", ")} FROM ${from}`;
    this.order = ` ORDER BY ${quote(columns.get(identifier)!)} ASC`;
    this.converts = converts;
  }

  /** A reader for the model, or undefined when one of its fields does not convert exactly. */
  static of(pool: SqlPool, fields: readonly FieldInfo[], table: TableInfo, identifier: string) {
    const columns = new Map<string, string>();
    const filterable = new Map<string, Filter>();
    const converts: Convert[] = [];
    for (const f of fields) {
      const column = table.columns.get(f.name);
      const convert = column ? converterOf(f, column) : undefined;
      if (!column || !convert) return undefined;
      columns.set(f.name, column.name);
      converts.push(convert);
      const filter = f.list ? undefined : filterOf(f, column);
      if (filter) filterable.set(f.name, filter);
    }
    if (!columns.has(identifier)) return undefined;
    return new SqlListReader(pool, columns, filterable, fields, table, identifier, converts);
  }

  async list(where: Row, skip: number, take: number): Promise<Row[] | undefined> {
    const values: unknown[] = [];
    let sql = this.select;
    for (const key of Object.keys(where)) {
      const filter = this.filterable.get(key);
      const value = filter ? filter(where[key]) : undefined;
      if (value === undefined) return undefined;
      values.push(value);
      sql += `${values.length === 1 ? " WHERE " : " AND "}${quote(this.columns.get(key)!)} = $${values.length}`;
    }
    values.push(take, skip);
    sql += `${this.order} LIMIT $${values.length - 1} OFFSET $${values.length}`;
    let rows: unknown[][];
    try {
      ({ rows } = await this.pool.query({ text: sql, values, rowMode: "array", types: TYPES }));
    } catch {
      return undefined; // Prisma runs it again and reports the error its own way
    }
    const out: Row[] = new Array(rows.length);
    const { converts, names } = this;
    for (let i = 0; i < rows.length; i++) {
      const cells = rows[i]!;
      const row: Row = {};
      for (let c = 0; c < names.length; c++) {
        const v = cells[c] === null ? null : converts[c]!(cells[c]);
        if (v === DECLINE) return undefined;
        row[names[c]!] = v;
      }
      out[i] = row;
    }
    return out;
  }
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

function converterOf(f: FieldInfo, column: ColumnInfo): Convert | undefined {
  if (f.list) return f.type === "String" ? stringList : undefined;
  switch (f.type) {
    case "String":
      return (v) => (typeof v === "string" ? v : DECLINE);
    case "Enum": {
      // Prisma answers the member's name, which @map may make differ from the stored value.
      const members = column.enumMembers;
      return members && ((v) => (typeof v === "string" ? (members.get(v) ?? DECLINE) : DECLINE));
    }
    case "Int":
      return (v) => (typeof v === "number" ? v : DECLINE);
    case "Boolean":
      return (v) => (typeof v === "boolean" ? v : DECLINE);
    case "Json":
      return (v) => v;
    case "DateTime":
      // Prisma's default is timestamp(3); other precisions or date/time types are left to Prisma.
      return column.nativeType === undefined || /^Timestamp(tz)?\([0-3]\)$/.test(column.nativeType)
        ? timestamp
        : undefined;
    default:
      return undefined;
  }
}

function stringList(v: unknown): unknown {
  if (!Array.isArray(v)) return DECLINE;
  for (const item of v) if (typeof item !== "string") return DECLINE; // Prisma refuses null elements
  return v;
}

/**
 * PostgreSQL's ISO output of timestamp(p ≤ 3) and timestamptz(p ≤ 3):
 * `YYYY-MM-DD HH:MM:SS[.f{1,3}][±HH[:MM]]`, read character by character (a
 * regular expression costs more than the rest of a row). BC, infinity, years
 * before 1000 or past 9999 and other offsets are left to Prisma. Prisma reads
 * the wall-clock fields as UTC whatever the offset says (its adapter replaces
 * the offset with +00:00), so this does too.
 */
function timestamp(v: unknown): unknown {
  if (typeof v !== "string" || v.length < 19) return DECLINE;
  const year = digits(v, 0, 4);
  const month = digits(v, 5, 2);
  const day = digits(v, 8, 2);
  const hour = digits(v, 11, 2);
  const minute = digits(v, 14, 2);
  const second = digits(v, 17, 2);
  if (
    year < 1000 ||
    month < 0 ||
    day < 0 ||
    hour < 0 ||
    minute < 0 ||
    second < 0 ||
    v[4] !== "-" ||
    v[7] !== "-" ||
    v[10] !== " " ||
    v[13] !== ":" ||
    v[16] !== ":"
  )
    return DECLINE;
  let i = 19;
  let ms = 0;
  if (v[i] === ".") {
    const start = ++i;
    while (i < v.length && i - start < 3 && isDigit(v.charCodeAt(i))) i++;
    if (i === start) return DECLINE;
    ms = digits(v, start, i - start) * (i - start === 1 ? 100 : i - start === 2 ? 10 : 1);
  }
  if (i < v.length) {
    // An offset: ±HH or ±HH:MM, and nothing after it.
    const sign = v[i];
    const rest = v.length - i;
    if ((sign !== "+" && sign !== "-") || (rest !== 3 && rest !== 6) || digits(v, i + 1, 2) < 0)
      return DECLINE;
    if (rest === 6 && (v[i + 3] !== ":" || digits(v, i + 4, 2) < 0)) return DECLINE;
  }
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms));
  // Fields out of range would roll over here where Prisma's parse gives an invalid date (PostgreSQL writes none).
  return date.getUTCDate() === day &&
    date.getUTCMonth() === month - 1 &&
    hour < 24 &&
    minute < 60 &&
    second < 60
    ? date
    : DECLINE;
}

const isDigit = (c: number) => c >= 48 && c <= 57;

/** The number written by `count` decimal digits at `at`, or -1 if they are not all digits. */
function digits(text: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) {
    const c = text.charCodeAt(i);
    if (!isDigit(c)) return -1;
    n = n * 10 + (c - 48);
  }
  return n;
}

/** A filter value as a statement parameter; undefined for null, another kind, an operator object: Prisma decides. */
type Filter = (value: unknown) => unknown;

function filterOf(f: FieldInfo, column: ColumnInfo): Filter | undefined {
  switch (f.type) {
    case "String":
      return (v) => (typeof v === "string" ? v : undefined);
    case "Enum": {
      const stored = new Map([...(column.enumMembers ?? [])].map(([value, member]) => [member, value]));
      return (v) => (typeof v === "string" ? stored.get(v) : undefined);
    }
    case "Int":
      return (v) => (Number.isSafeInteger(v) ? v : undefined);
    case "Boolean":
      return (v) => (typeof v === "boolean" ? v : undefined);
    case "DateTime":
      // The UTC fields without an offset, as Prisma sends a date: PostgreSQL reads them in the session's time zone.
      return (v) => {
        const year = v instanceof Date ? v.getUTCFullYear() : Number.NaN;
        return year >= 1000 && year <= 9999 ? (v as Date).toISOString().slice(0, -1) : undefined;
      };
    default:
      return undefined;
  }
}
