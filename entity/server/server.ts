import { timingSafeEqual } from "node:crypto";
import type { Logger } from "../../common/logger.js";
import {
  type ActionDefinition,
  type ActionHandler,
  actionContext,
  BUILT_IN_ACTIONS,
  type EntityBinding,
  type WriteCheck,
} from "./actions.js";
import type { EntityManager, RepositoryOptions, Row } from "./entity-manager.js";
import { EntityServerError } from "./errors.js";
import { renderJson, renderJsonError } from "./render-json.js";
import { renderXmlCollection, renderXmlEntity, renderXmlError } from "./render-xml.js";
import { type Format, parseRequestMap, type RequestMap, requestFormat } from "./request-map.js";

export interface AliasOptions extends RepositoryOptions {
  /** Fields never rendered nor filterable (e.g. secrets). */
  hidden?: string[];
  /** Refuse insert, update, delete and custom actions registered as writes. */
  readOnly?: boolean;
  /** Last step before rendering each entity (after hidden fields are removed), e.g. to redact nested values. */
  present?: (row: Row) => Row;
  /**
   * Last step before insert and update: gets the parsed data (and, for an
   * update, the stored row) and returns what to write, or throws an
   * EntityServerError (VALIDATION) naming what is wrong.
   */
  checkWrite?: WriteCheck;
}

export interface ActionOptions {
  /** The action changes data (refused on read-only aliases). Default false. */
  writes?: boolean;
}

export interface AuthRequest {
  username?: string;
  password?: string;
  alias: string;
  action: string;
  id?: string | number | bigint;
}

/** Decides whether a request may run; called before any action. */
export type Authenticator = (request: AuthRequest) => boolean | Promise<boolean>;

export interface EntityResponse {
  status: number;
  format: Format;
  contentType: string;
  body: string;
  /** The error code when status is not 2xx. */
  errorCode?: string;
  /** Headers a host should add (e.g. Allow on 405). */
  headers?: Record<string, string>;
}

const CONTENT_TYPES: Record<Format, string> = {
  xml: "application/xml; charset=utf-8",
  json: "application/json; charset=utf-8",
};

/**
 * The low-level entity server: no routing, no URL parsing. Give it an entity
 * manager and a request map, bind aliases, and `execute()` returns the
 * response body as a string (`handle()` also gives status and content type).
 * One instance can serve many requests: pass each request map to
 * `execute(map)`/`handle(map)`; the constructor's map is the default.
 */
export class EntityServer {
  private readonly bindings = new Map<string, EntityBinding>();
  private readonly globalActions = new Map<string, ActionDefinition>();
  private readonly entityActions = new Map<string, Map<string, ActionDefinition>>();
  private authenticator?: Authenticator;

  constructor(
    private readonly manager: EntityManager,
    private readonly requestMap: RequestMap = {},
    private readonly logger?: Logger,
  ) {}

  /** Binds a persisted entity class (for Prisma: a model name) to an alias. */
  setEntityAlias(entityClass: string, alias: string, options: AliasOptions = {}): this {
    if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(alias)) {
      throw new Error(`invalid alias "${alias}": use letters, digits, "_" and "-", starting with a letter`);
    }
    const repository = this.manager.repository(entityClass, options);
    const fieldsByName = new Map(repository.fields.map((f) => [f.name, f]));
    for (const name of options.hidden ?? []) {
      if (!fieldsByName.has(name)) throw new Error(`hidden field "${name}" is not a field of ${entityClass}`);
    }
    this.bindings.set(alias, {
      alias,
      repository,
      hidden: new Set(options.hidden ?? []),
      readOnly: options.readOnly ?? false,
      fieldsByName,
      ...(options.present ? { present: options.present } : {}),
      ...(options.checkWrite ? { checkWrite: options.checkWrite } : {}),
    });
    return this;
  }

  /** Rebinds an alias with another identifier field. */
  setEntityIdentifierKey(alias: string, key: string): this {
    const b = this.binding(alias);
    return this.setEntityAlias(b.repository.entityClass, alias, {
      identifier: key,
      hidden: [...b.hidden],
      readOnly: b.readOnly,
      ...(b.present ? { present: b.present } : {}),
      ...(b.checkWrite ? { checkWrite: b.checkWrite } : {}),
    });
  }

  aliases(): string[] {
    return [...this.bindings.keys()];
  }

  /** What an alias serves (entity class, identifier, read-only flag, visible fields), for hosts that list it. */
  describe(alias: string): { entityClass: string; identifier: string; readOnly: boolean; fields: string[] } {
    const b = this.binding(alias);
    return {
      entityClass: b.repository.entityClass,
      identifier: b.repository.identifier,
      readOnly: b.readOnly,
      fields: b.repository.fields.map((f) => f.name).filter((n) => !b.hidden.has(n)),
    };
  }

  /** A custom action for every alias. Per-alias actions of the same name win. */
  registerAction(name: string, handler: ActionHandler, options: ActionOptions = {}): this {
    this.globalActions.set(checkActionName(name), { handler, writes: options.writes ?? false });
    return this;
  }

  /** A custom action for one alias. */
  addEntityAction(alias: string, name: string, handler: ActionHandler, options: ActionOptions = {}): this {
    let actions = this.entityActions.get(alias);
    if (!actions) {
      actions = new Map();
      this.entityActions.set(alias, actions);
    }
    actions.set(checkActionName(name), { handler, writes: options.writes ?? false });
    return this;
  }

  /** Whether `name` is a custom action of `alias` (hosts use it to tell `/alias/name` from `/alias/id`). */
  hasCustomAction(alias: string, name: string): boolean {
    return this.entityActions.get(alias)?.has(name) === true || this.globalActions.has(name);
  }

  setAuthenticator(authenticator: Authenticator | undefined): this {
    this.authenticator = authenticator;
    return this;
  }

  /** Requires these credentials on every request (constant-time comparison). */
  setCredentials(username: string, password: string): this {
    return this.setAuthenticator(
      (r) => safeEqual(r.username ?? "", username) && safeEqual(r.password ?? "", password),
    );
  }

  /** Whether a request with these credentials may run (true when no authenticator is set); hosts use it for their own endpoints. */
  async isAuthorized(request: AuthRequest): Promise<boolean> {
    return this.authenticator ? await this.authenticator(request) : true;
  }

  /** Runs the request and returns the response body. */
  async execute(map: RequestMap = this.requestMap): Promise<string> {
    return (await this.handle(map)).body;
  }

  /** Runs the request; never throws: failures come back as rendered errors. */
  async handle(map: RequestMap = this.requestMap): Promise<EntityResponse> {
    let format = requestFormat(map ?? {});
    try {
      const request = parseRequestMap(map);
      format = request.format;
      const ok = await this.isAuthorized({
        alias: request.alias,
        action: request.action,
        ...(request.id !== undefined ? { id: request.id } : {}),
        ...(request.username !== undefined ? { username: request.username } : {}),
        ...(request.password !== undefined ? { password: request.password } : {}),
      });
      if (!ok) throw unauthenticated(request.username);
      const binding = this.bindings.get(request.alias);
      if (!binding)
        throw new EntityServerError("UNKNOWN_ENTITY", `unknown entity "${request.alias}"`, "_entity");
      const action =
        this.entityActions.get(request.alias)?.get(request.action) ??
        this.globalActions.get(request.action) ??
        (Object.hasOwn(BUILT_IN_ACTIONS, request.action) ? BUILT_IN_ACTIONS[request.action] : undefined);
      if (!action) {
        throw new EntityServerError(
          "UNKNOWN_ACTION",
          `unknown action "${request.action}" of ${request.alias}`,
          "_action",
        );
      }
      if (action.writes && binding.readOnly) {
        const e = new EntityServerError(
          "READ_ONLY",
          `${request.alias} is read-only: ${request.action} is not allowed`,
        );
        e.headers = { Allow: "GET, HEAD" };
        throw e;
      }
      const result = await action.handler(actionContext(request, binding));
      return {
        status: action.status ?? 200,
        format,
        contentType: CONTENT_TYPES[format],
        body: this.render(format, binding, result),
      };
    } catch (err) {
      if (!(err instanceof EntityServerError)) this.logger?.error({ err }, "entity server action failed");
      return errorResponse(err, format);
    }
  }

  private binding(alias: string): EntityBinding {
    const b = this.bindings.get(alias);
    if (!b) throw new Error(`unknown alias "${alias}"`);
    return b;
  }

  private render(format: Format, binding: EntityBinding, result: unknown): string {
    const present = binding.present;
    const strip = (v: unknown) => {
      if (!isRow(v)) return v;
      const row = binding.hidden.size > 0 ? withoutHidden(v, binding.hidden) : v;
      return present ? present(row) : row;
    };
    if (Array.isArray(result)) {
      const rows = result.map(strip);
      return format === "xml" ? renderXmlCollection(binding.alias, rows) : renderJson(rows);
    }
    const value = strip(result);
    return format === "xml" ? renderXmlEntity(binding.alias, value) : renderJson(value);
  }
}

/** Renders any failure in the given format; non-server errors become INTERNAL with no detail. */
export function errorResponse(err: unknown, format: Format): EntityResponse {
  const e =
    err instanceof EntityServerError
      ? err
      : new EntityServerError("INTERNAL", "internal error: the entity server could not complete the request");
  return {
    status: e.status,
    format,
    contentType: CONTENT_TYPES[format],
    body: format === "xml" ? renderXmlError(e) : renderJsonError(e),
    errorCode: e.code,
    ...(e.headers ? { headers: e.headers } : {}),
  };
}

export const unauthenticated = (username: string | undefined) =>
  new EntityServerError(
    "UNAUTHENTICATED",
    username === undefined ? "credentials required" : "invalid credentials",
  );

function isRow(v: unknown): v is Row {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function withoutHidden(row: Row, hidden: ReadonlySet<string>): Row {
  const out: Row = {};
  for (const key in row) if (!hidden.has(key)) out[key] = row[key];
  return out;
}

function checkActionName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(name)) throw new Error(`invalid action name "${name}"`);
  return name;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
