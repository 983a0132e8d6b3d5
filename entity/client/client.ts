import { EntityConfiguration, type FieldDefinition, type FieldKind } from "./configuration.js";
import { EntityClientError, EntityResponseError, EntityTransportError, httpErrorFor } from "./errors.js";
import { encodeForm } from "./form-encoding.js";
import { IdentityMap } from "./identity-map.js";
import type { ResponseFormat, TransformedResponse } from "./response-transformer.js";
import { FetchTransport, type Transport, type TransportRequest } from "./transport.js";
import type { UrlOptions } from "./url-generator.js";

export type EntityId = string | number | bigint;

/** What the client needs of an entity object; the Entity base class (entity.ts) is one. */
export interface EntityRecord {
  get(name: string): unknown;
  set(name: string, value: unknown): unknown;
  setExtra(extra: Record<string, unknown>): void;
}

/** An entity subclass: constructible without arguments, with the static configure hook. */
export interface EntityClass<T extends EntityRecord = EntityRecord> {
  new (): T;
  readonly name: string;
  configure(config: EntityConfiguration): void;
}

const configurations = new WeakMap<object, EntityConfiguration>();

/** The configuration of an entity class, built once by calling its static configure(). */
export function configurationOf(cls: EntityClass): EntityConfiguration {
  let config = configurations.get(cls);
  if (!config) {
    config = new EntityConfiguration(cls.name);
    cls.configure(config);
    // Class fields declared with initializers count as fields too, typed by their default.
    for (const [name, value] of Object.entries(new cls())) {
      if (!config.fields.has(name)) config.fields.set(name, inferField(name, value));
    }
    config.check();
    configurations.set(cls, config);
  }
  return config;
}

function inferField(name: string, value: unknown): FieldDefinition {
  if (Array.isArray(value)) return { name, kind: "auto", list: true };
  const kind: FieldKind =
    typeof value === "string"
      ? "string"
      : typeof value === "number"
        ? "number"
        : typeof value === "boolean"
          ? "boolean"
          : typeof value === "bigint"
            ? "bigint"
            : value instanceof Date
              ? "date"
              : value !== null && typeof value === "object"
                ? "json"
                : "auto";
  return { name, kind, list: false };
}

export interface FindAllOptions {
  /** Custom action: GET {url}/{name}/{action}.{format}. */
  action?: string;
  page?: number;
  perPage?: number;
  first?: number;
  max?: number;
}

/**
 * Talks to entity servers for entity classes: owns the transport and the
 * identity map (one object per id per client).
 */
export class EntityClient {
  readonly identityMap = new IdentityMap<EntityRecord>();

  constructor(readonly transport: Transport = new FetchTransport()) {}

  async find<T extends EntityRecord>(cls: EntityClass<T>, id: EntityId, action?: string): Promise<T> {
    if (!hasId(id)) throw new EntityClientError(`${cls.name}.find() needs an id`);
    const result = await this.request(cls, "GET", { id, ...(action ? { action } : {}) });
    return this.one(cls, result);
  }

  async findAll<T extends EntityRecord>(
    cls: EntityClass<T>,
    filters: Record<string, unknown> = {},
    options: FindAllOptions = {},
  ): Promise<T[]> {
    const parameters: Record<string, unknown> = { ...filters };
    if (options.page !== undefined) parameters._page = options.page;
    if (options.perPage !== undefined) parameters._max_per_page = options.perPage;
    if (options.first !== undefined) parameters._first = options.first;
    if (options.max !== undefined) parameters._max = options.max;
    const result = await this.request(cls, "GET", {
      parameters,
      ...(options.action ? { action: options.action } : {}),
    });
    if (result.kind === "collection") return result.items.map((item) => this.hydrate(cls, item));
    if (result.kind === "entity") return [this.hydrate(cls, result.data)];
    return [];
  }

  /** PUT {url}/{name}.{format} when new, POST {url}/{name}/{id}.{format} when persisted; refreshes the object. */
  async save<T extends EntityRecord>(entity: T): Promise<T> {
    const cls = entity.constructor as EntityClass<T>;
    const config = configurationOf(cls);
    const id = entity.get(config.identifierKey) as EntityId | undefined;
    const params = toParams(entity, config);
    const result = hasId(id)
      ? await this.request(cls, "POST", { id }, params)
      : await this.request(cls, "PUT", {}, params);
    if (result.kind === "entity") this.hydrate(cls, result.data, entity);
    return entity;
  }

  /** DELETE {url}/{name}/{id}.{format}; the object leaves the identity map. */
  async delete(entity: EntityRecord): Promise<void> {
    const cls = entity.constructor as EntityClass;
    const config = configurationOf(cls);
    const id = entity.get(config.identifierKey) as EntityId | undefined;
    if (!hasId(id)) throw new EntityClientError(`${cls.name}: cannot delete an entity that was never saved`);
    await this.request(cls, "DELETE", { id });
    this.identityMap.delete(cls, id);
  }

  /**
   * A custom action: {url}/{name}[/{id}]/{action}.{format}. Parameters go in
   * the query for GET and DELETE, in the body otherwise. Entities in the
   * answer are hydrated; any other value is returned as parsed.
   */
  async execute<T extends EntityRecord>(
    cls: EntityClass<T>,
    method: string,
    action: string,
    params: Record<string, unknown> = {},
    id?: EntityId,
  ): Promise<T | T[] | unknown> {
    const m = method.toUpperCase();
    const inQuery = m === "GET" || m === "DELETE" || m === "HEAD";
    const result = await this.request(
      cls,
      m,
      { action, ...(id !== undefined ? { id } : {}), ...(inQuery ? { parameters: params } : {}) },
      inQuery ? undefined : params,
    );
    if (result.kind === "collection") return result.items.map((item) => this.hydrate(cls, item));
    if (result.kind === "entity") return this.hydrate(cls, result.data);
    return result.kind === "value" ? result.value : undefined;
  }

  /** Fills an object from response data; without a target, the identity-mapped object for the id (or a new one). */
  hydrate<T extends EntityRecord>(cls: EntityClass<T>, data: Record<string, unknown>, target?: T): T {
    const config = configurationOf(cls);
    const id = data[config.identifierKey];
    let entity = target;
    if (!entity && hasId(id)) entity = this.identityMap.get(cls, id) as T | undefined;
    entity ??= new cls();
    const extra: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(data)) {
      const field = config.fields.get(key);
      if (field) (entity as unknown as Record<string, unknown>)[key] = convert(value, field);
      else extra[key] = value;
    }
    entity.setExtra(extra);
    const finalId = entity.get(config.identifierKey);
    if (hasId(finalId)) this.identityMap.set(cls, finalId, entity);
    return entity;
  }

  private one<T extends EntityRecord>(cls: EntityClass<T>, result: TransformedResponse): T {
    if (result.kind === "entity") return this.hydrate(cls, result.data);
    throw new EntityClientError(`${cls.name}: expected one entity in the response, got ${result.kind}`);
  }

  /** Sends one request and reads the answer; non-2xx answers throw typed errors. */
  async request(
    cls: EntityClass,
    method: string,
    urlOptions: UrlOptions,
    body?: Record<string, unknown>,
  ): Promise<TransformedResponse> {
    const config = configurationOf(cls);
    const url = config.urlGenerator.generate(config, urlOptions);
    const headers: Record<string, string> = {
      accept: config.responseType === "xml" ? "application/xml" : "application/json",
    };
    if (config.username !== undefined) {
      headers.authorization = `Basic ${Buffer.from(`${config.username}:${config.password ?? ""}`).toString("base64")}`;
    }
    const request: TransportRequest = { method, url, headers };
    if (body !== undefined) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      request.body = encodeForm(body);
    }
    let response: Awaited<ReturnType<Transport["send"]>>;
    try {
      response = await this.transport.send(request);
    } catch (err) {
      throw new EntityTransportError(method, url, err);
    }
    const format = formatOf(response.headers["content-type"], config.responseType);
    if (response.status < 200 || response.status > 299) {
      let detail: { code?: string; message?: string; field?: string } = {};
      try {
        const t = config.responseTransformer.transform(response.body, format);
        if (t.kind === "error") detail = t;
      } catch {
        // Not an entity server error body (a proxy's page, say): status and body still say enough.
      }
      throw httpErrorFor(method, url, response.status, response.body, detail);
    }
    if (response.body === "" || method === "HEAD") return { kind: "value", value: undefined };
    try {
      return config.responseTransformer.transform(response.body, format);
    } catch (err) {
      throw new EntityResponseError(method, url, response.status, response.body, (err as Error).message);
    }
  }
}

function formatOf(contentType: string | undefined, fallback: ResponseFormat): ResponseFormat {
  if (!contentType) return fallback;
  if (/\bxml\b/i.test(contentType)) return "xml";
  if (/\bjson\b/i.test(contentType)) return "json";
  return fallback;
}

function hasId(id: unknown): id is EntityId {
  return id !== undefined && id !== null && id !== "";
}

function toParams(entity: EntityRecord, config: EntityConfiguration): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of config.fields.values()) {
    const value = entity.get(field.name);
    if (value === undefined) continue;
    out[field.name] = field.kind === "json" && value !== null ? JSON.stringify(value) : value;
  }
  return out;
}

function convert(value: unknown, field: FieldDefinition): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (field.list) return (Array.isArray(value) ? value : [value]).map((v) => convertScalar(v, field.kind));
  return convertScalar(value, field.kind);
}

function convertScalar(value: unknown, kind: FieldKind): unknown {
  if (value === null) return null;
  switch (kind) {
    case "string":
      return value instanceof Date
        ? value.toISOString()
        : typeof value === "object"
          ? JSON.stringify(value)
          : String(value);
    case "number":
      return typeof value === "number" ? value : Number(value);
    case "bigint":
      return typeof value === "bigint" ? value : BigInt(String(value));
    case "boolean":
      return typeof value === "boolean" ? value : value === "true" || value === "1";
    case "date":
      return value instanceof Date ? value : new Date(String(value));
    default:
      return value;
  }
}
