import { unstorableText } from "../../common/strict-text.js";
import { EntityServerError, validationError } from "./errors.js";

/**
 * What the host (an HTTP adapter, a test, a queue consumer) hands the server:
 * reserved keys start with an underscore, every other key is entity data
 * (fields for insert/update, equality filters for list).
 */
export interface RequestMap {
  _method?: string;
  _format?: string;
  _entity?: string;
  _action?: string;
  _id?: string | number | bigint;
  _page?: string | number;
  _max_per_page?: string | number;
  _first?: string | number;
  _max?: string | number;
  /** Credentials the host extracted (e.g. from a Basic Authorization header). */
  _username?: string;
  _password?: string;
  [key: string]: unknown;
}

export const FORMATS = ["xml", "json"] as const;
export type Format = (typeof FORMATS)[number];
export const DEFAULT_FORMAT: Format = "json";

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 1000;

const RESERVED = new Set([
  "_method",
  "_format",
  "_entity",
  "_action",
  "_id",
  "_page",
  "_max_per_page",
  "_first",
  "_max",
  "_username",
  "_password",
]);

export interface ParsedRequest {
  method: string;
  format: Format;
  alias: string;
  action: string;
  id?: string | number | bigint;
  skip: number;
  take: number;
  data: Record<string, unknown>;
  username?: string;
  password?: string;
}

/** The format to render in, even for a request that is otherwise malformed. */
export function requestFormat(map: RequestMap): Format {
  const f = typeof map._format === "string" ? map._format.toLowerCase() : undefined;
  return (FORMATS as readonly string[]).includes(f ?? "") ? (f as Format) : DEFAULT_FORMAT;
}

/** The built-in action a method implies when `_action` is absent. */
export function impliedAction(method: string, hasId: boolean): string | undefined {
  switch (method) {
    case "get":
    case "head":
      return hasId ? "get" : "list";
    case "put":
    case "post":
      return hasId ? "update" : "insert";
    case "patch":
      return hasId ? "update" : undefined;
    case "delete":
      return hasId ? "delete" : undefined;
    default:
      return undefined;
  }
}

/** Checks the reserved keys and splits the map into its parts. */
export function parseRequestMap(map: RequestMap): ParsedRequest {
  if (map === null || typeof map !== "object" || Array.isArray(map)) {
    throw validationError("the request map must be an object");
  }
  for (const key of Object.keys(map)) {
    if (key.startsWith("_") && !RESERVED.has(key)) {
      throw validationError(`unknown reserved parameter "${key}"`, key);
    }
  }

  if (map._format !== undefined) {
    const f = String(map._format).toLowerCase();
    if (!(FORMATS as readonly string[]).includes(f)) {
      throw new EntityServerError(
        "NOT_ACCEPTABLE",
        `unsupported format "${map._format}": expected xml or json`,
      );
    }
  }
  const format = requestFormat(map);

  const method = map._method === undefined ? "get" : str(map._method, "_method").toLowerCase();
  if (!/^[a-z]+$/.test(method)) throw validationError(`invalid _method "${map._method}"`, "_method");

  if (map._entity === undefined || map._entity === "") throw validationError("missing _entity", "_entity");
  const alias = str(map._entity, "_entity");

  let id: string | number | bigint | undefined;
  if (map._id !== undefined && map._id !== "") {
    if (typeof map._id === "string" || typeof map._id === "number" || typeof map._id === "bigint")
      id = map._id;
    else throw validationError("_id must be a single scalar value", "_id");
  }

  let action: string;
  if (map._action !== undefined && map._action !== "") {
    action = str(map._action, "_action");
  } else {
    const implied = impliedAction(method, id !== undefined);
    if (!implied) {
      throw new EntityServerError(
        "UNKNOWN_ACTION",
        `no action given and method "${method}" implies none${id === undefined ? " without an id" : ""}`,
      );
    }
    action = implied;
  }

  const { skip, take } = paging(map);

  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(map)) {
    if (!key.startsWith("_") && value !== undefined) data[key] = value;
  }
  // PostgreSQL refuses NUL in text, and a lone surrogate would be stored as U+FFFD: refuse both here.
  for (const [key, value] of Object.entries(data)) {
    const problem = unstorableText(key, "a parameter name") ?? unstorableText(value, key);
    if (problem) throw validationError(problem, key);
  }

  return {
    method,
    format,
    alias,
    action,
    ...(id !== undefined ? { id } : {}),
    skip,
    take,
    data,
    ...(map._username !== undefined ? { username: str(map._username, "_username") } : {}),
    ...(map._password !== undefined ? { password: str(map._password, "_password") } : {}),
  };
}

function paging(map: RequestMap): { skip: number; take: number } {
  const page = int(map._page, "_page", 1);
  const perPage = int(map._max_per_page, "_max_per_page", 1, MAX_PER_PAGE);
  const first = int(map._first, "_first", 0);
  const max = int(map._max, "_max", 1, MAX_PER_PAGE);
  const offsetStyle = first !== undefined || max !== undefined;
  if (offsetStyle && (page !== undefined || perPage !== undefined)) {
    throw validationError("use either _page/_max_per_page or _first/_max, not both", "_page");
  }
  if (offsetStyle) return { skip: first ?? 0, take: max ?? DEFAULT_PER_PAGE };
  const take = perPage ?? DEFAULT_PER_PAGE;
  return { skip: ((page ?? 1) - 1) * take, take };
}

function int(value: unknown, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined || value === "") return undefined;
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim() : "";
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw validationError(
      `${key} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`,
      key,
    );
  }
  return Number(text);
}

function str(value: unknown, key: string): string {
  if (typeof value !== "string") throw validationError(`${key} must be a string`, key);
  return value;
}
