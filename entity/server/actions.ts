import { unstorableText } from "../../common/strict-text.js";
import type { EntityRepository, FieldInfo, Row } from "./entity-manager.js";
import { EntityServerError, validationError } from "./errors.js";
import { parseFieldValue } from "./field-values.js";
import type { ParsedRequest } from "./request-map.js";

/** One alias as the server exposes it. */
export interface EntityBinding {
  alias: string;
  repository: EntityRepository;
  /** Never rendered, never usable as a filter; still writable (write-only) when the alias is. */
  hidden: ReadonlySet<string>;
  readOnly: boolean;
  fieldsByName: ReadonlyMap<string, FieldInfo>;
  present?: (row: Row) => Row;
  checkWrite?: WriteCheck;
}

/** Checks (and may rewrite) the data of an insert (no stored row) or an update. */
export type WriteCheck = (data: Row, stored?: Row) => Row | Promise<Row>;

export interface ActionContext {
  request: ParsedRequest;
  binding: EntityBinding;
  /** The request's data fields parsed to their types; throws VALIDATION on unknown fields or bad values. */
  data(purpose: "write" | "filter"): Row;
  /** The request's id parsed to the identifier's type; throws NOT_FOUND when absent or unparsable. */
  id(): unknown;
}

/** What an action returns: one entity (a row), a list of rows, or any other value. */
export type ActionHandler = (ctx: ActionContext) => Promise<unknown> | unknown;

export interface ActionDefinition {
  handler: ActionHandler;
  /** Changes data: refused on read-only aliases. */
  writes: boolean;
  /** HTTP-ish status of a success (201 for insert). */
  status?: number;
}

const notFound = (ctx: ActionContext) =>
  new EntityServerError(
    "NOT_FOUND",
    `no ${ctx.binding.alias} with ${ctx.binding.repository.identifier} ${JSON.stringify(String(ctx.request.id))}`,
  );

export const BUILT_IN_ACTIONS: Record<string, ActionDefinition> = {
  get: {
    writes: false,
    handler: async (ctx) => (await ctx.binding.repository.get(ctx.id())) ?? Promise.reject(notFound(ctx)),
  },
  list: {
    writes: false,
    handler: (ctx) => {
      if (ctx.request.id !== undefined) throw validationError("list takes no id", "_id");
      return ctx.binding.repository.list({
        where: ctx.data("filter"),
        skip: ctx.request.skip,
        take: ctx.request.take,
      });
    },
  },
  insert: {
    writes: true,
    status: 201,
    handler: async (ctx) => {
      if (ctx.request.id !== undefined) throw validationError("insert takes no id in the path", "_id");
      const data = ctx.data("write");
      const check = ctx.binding.checkWrite;
      return ctx.binding.repository.insert(check ? await check(data) : data);
    },
  },
  update: {
    writes: true,
    handler: async (ctx) => {
      const id = ctx.id();
      const data = ctx.data("write");
      const key = ctx.binding.repository.identifier;
      if (key in data) {
        if (String(data[key]) !== String(id)) {
          throw validationError(
            `${key} in the data (${String(data[key])}) differs from the id (${String(id)})`,
            key,
          );
        }
        delete data[key];
      }
      const check = ctx.binding.checkWrite;
      if (check) {
        const stored = await ctx.binding.repository.get(id);
        if (!stored) throw notFound(ctx);
        return (
          (await ctx.binding.repository.update(id, await check(data, stored))) ??
          Promise.reject(notFound(ctx))
        );
      }
      return (await ctx.binding.repository.update(id, data)) ?? Promise.reject(notFound(ctx));
    },
  },
  delete: {
    writes: true,
    handler: async (ctx) => (await ctx.binding.repository.delete(ctx.id())) ?? Promise.reject(notFound(ctx)),
  },
};

/** Builds the context helpers over one request and binding. */
export function actionContext(request: ParsedRequest, binding: EntityBinding): ActionContext {
  return {
    request,
    binding,
    data(purpose) {
      const out: Row = {};
      for (const [key, raw] of Object.entries(request.data)) {
        const field = binding.fieldsByName.get(key);
        if (!field || (purpose === "filter" && binding.hidden.has(key))) {
          throw validationError(`unknown field "${key}" of ${binding.alias}`, key);
        }
        // Whole-document equality on JSON is rarely what anyone wants, and could probe redacted values.
        if (purpose === "filter" && field.type === "Json") {
          throw validationError(`${key} is a JSON field and cannot be used as a filter`, key);
        }
        out[key] = parseFieldValue(field, raw);
      }
      return out;
    },
    id() {
      if (request.id === undefined)
        throw new EntityServerError("VALIDATION", "this action needs an id", "_id");
      const field = binding.fieldsByName.get(binding.repository.identifier);
      if (!field) return request.id;
      try {
        const id = parseFieldValue(
          field,
          typeof request.id === "bigint" ? request.id.toString() : request.id,
        );
        // An id no column can hold (empty, NUL, lone surrogate) names no row: answered without a query.
        if (id === null || unstorableText(id) !== undefined) throw validationError("unusable id");
        return id;
      } catch {
        throw notFound(this);
      }
    },
  };
}
