import {
  configurationOf,
  type EntityClass,
  EntityClient,
  type EntityId,
  type FindAllOptions,
} from "./client.js";
import type { EntityConfiguration } from "./configuration.js";
import { EntityClientError } from "./errors.js";

let defaultClient: EntityClient | undefined;
const clients = new WeakMap<object, EntityClient>();

/**
 * ActiveRecord-style base class. A subclass maps to one REST resource:
 *
 *   class User extends Entity {
 *     id?: number;
 *     username = "";
 *     static override configure(c: EntityConfiguration) {
 *       c.setUrl("http://127.0.0.1:8090").setName("user");
 *     }
 *     getUsername() { return this.username; }
 *     setUsername(v: string) { this.username = v; }
 *   }
 *
 * Fields are the class fields (typed by their initial value) plus any
 * declared with `config.field()`; `get`/`set` reach them by name.
 */
export abstract class Entity {
  #extra: Record<string, unknown> = {};

  // Static methods use `this` on purpose: it is the subclass they were called on.

  /** Subclasses set the resource here. */
  static configure(_config: EntityConfiguration): void {
    // biome-ignore lint/complexity/noThisInStatic: the subclass that forgot to configure
    throw new EntityClientError(`${this.name} must define static configure(config)`);
  }

  /** Uses this client for this class and its subclasses (default: a shared client over fetch). */
  static useClient(client: EntityClient): void {
    // biome-ignore lint/complexity/noThisInStatic: the subclass the client is for
    if (this === Entity) defaultClient = client;
    // biome-ignore lint/complexity/noThisInStatic: the subclass the client is for
    else clients.set(this, client);
  }

  /** The client serving this class. */
  static client(): EntityClient {
    // biome-ignore lint/complexity/noThisInStatic: the subclass asking
    return clientFor(this);
  }

  static configuration(this: EntityClass): EntityConfiguration {
    // biome-ignore lint/complexity/noThisInStatic: the subclass asking
    return configurationOf(this);
  }

  /** GET {url}/{name}/{id}[/{action}].{format}; throws EntityNotFoundError on 404. */
  static find<T extends Entity>(this: EntityClass<T>, id: EntityId, action?: string): Promise<T> {
    // biome-ignore lint/complexity/noThisInStatic: the subclass it was called on
    return clientFor(this).find(this, id, action);
  }

  /** GET {url}/{name}[/{action}].{format}?{filters}: equality filters and paging. */
  static findAll<T extends Entity>(
    this: EntityClass<T>,
    filters?: Record<string, unknown>,
    options?: FindAllOptions,
  ): Promise<T[]> {
    // biome-ignore lint/complexity/noThisInStatic: the subclass it was called on
    return clientFor(this).findAll(this, filters, options);
  }

  /** A custom action of the resource: {url}/{name}/{action}.{format}. */
  static execute<T extends Entity>(
    this: EntityClass<T>,
    method: string,
    action: string,
    params?: Record<string, unknown>,
  ): Promise<T | T[] | unknown> {
    // biome-ignore lint/complexity/noThisInStatic: the subclass it was called on
    return clientFor(this).execute(this, method, action, params);
  }

  private client(): EntityClient {
    return clientFor(this.constructor);
  }

  /** Inserts (PUT) or updates (POST) and refreshes this object from the answer. */
  save(): Promise<this> {
    return this.client().save(this);
  }

  delete(): Promise<void> {
    return this.client().delete(this);
  }

  /** A custom action on this entity: {url}/{name}/{id}/{action}.{format}. */
  call(action: string, method = "POST", params?: Record<string, unknown>): Promise<unknown> {
    const cls = this.constructor as EntityClass;
    const id = this.getId();
    if (id === undefined) throw new EntityClientError(`${cls.name}: call() needs a saved entity`);
    return this.client().execute(cls, method, action, params ?? {}, id);
  }

  getId(): EntityId | undefined {
    const key = configurationOf(this.constructor as EntityClass).identifierKey;
    const id = this.get(key);
    return id === null || id === "" ? undefined : (id as EntityId | undefined);
  }

  get(name: string): unknown {
    return (this as unknown as Record<string, unknown>)[name];
  }

  set(name: string, value: unknown): this {
    (this as unknown as Record<string, unknown>)[name] = value;
    return this;
  }

  /** Keys of the last response that are not declared fields (never sent back). */
  extra(): Readonly<Record<string, unknown>> {
    return this.#extra;
  }

  /** @internal used by the client when hydrating. */
  setExtra(extra: Record<string, unknown>): void {
    this.#extra = extra;
  }

  /** The declared fields and their values. */
  toObject(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const name of configurationOf(this.constructor as EntityClass).fields.keys())
      out[name] = this.get(name);
    return out;
  }
}

/** The client for a class: its own, else its nearest ancestor's, else the shared default. */
function clientFor(start: object): EntityClient {
  for (let cls: object | null = start; cls && cls !== Function.prototype; cls = Object.getPrototypeOf(cls)) {
    const client = cls === Entity ? defaultClient : clients.get(cls);
    if (client) return client;
  }
  defaultClient ??= new EntityClient();
  return defaultClient;
}
