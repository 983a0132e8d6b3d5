import { EntityClientError } from "./errors.js";
import type { ResponseFormat, ResponseTransformer } from "./response-transformer.js";
import { StandardResponseTransformer } from "./response-transformer.js";
import { StandardUrlGenerator, type UrlGenerator } from "./url-generator.js";

/** How a field's value is converted when hydrated and sent. "auto" keeps what the response says. */
export type FieldKind = "string" | "number" | "bigint" | "boolean" | "date" | "json" | "auto";
export type FieldSpec = FieldKind | `${Exclude<FieldKind, "json">}[]`;

export interface FieldDefinition {
  name: string;
  kind: FieldKind;
  list: boolean;
}

/** What an entity class's static `configure()` sets up. */
export class EntityConfiguration {
  url = "";
  name = "";
  username?: string;
  password?: string;
  identifierKey = "id";
  responseType: ResponseFormat = "xml";
  urlGenerator: UrlGenerator = new StandardUrlGenerator();
  responseTransformer: ResponseTransformer = new StandardResponseTransformer();
  readonly fields = new Map<string, FieldDefinition>();

  constructor(readonly entityClass: string) {}

  /** The service address; trailing slashes are dropped. */
  setUrl(url: string): this {
    this.url = url.replace(/\/+$/, "");
    return this;
  }

  /** The resource name (the server's alias). */
  setName(name: string): this {
    this.name = name;
    return this;
  }

  /** HTTP Basic credentials sent with every request. */
  setCredentials(username: string, password: string): this {
    this.username = username;
    this.password = password;
    return this;
  }

  setUsername(username: string): this {
    this.username = username;
    return this;
  }

  setPassword(password: string): this {
    this.password = password;
    return this;
  }

  setIdentifierKey(key: string): this {
    this.identifierKey = key;
    return this;
  }

  /** The format requested from the server: "xml" (default) or "json". */
  setResponseType(type: ResponseFormat): this {
    if (type !== "xml" && type !== "json") throw new EntityClientError(`unsupported response type "${type}"`);
    this.responseType = type;
    return this;
  }

  setUrlGenerator(generator: UrlGenerator): this {
    this.urlGenerator = generator;
    return this;
  }

  setResponseTransformer(transformer: ResponseTransformer): this {
    this.responseTransformer = transformer;
    return this;
  }

  /** Declares a field and how its values are converted ("date", "number[]", …). */
  field(name: string, spec: FieldSpec = "auto"): this {
    const list = spec.endsWith("[]");
    this.fields.set(name, { name, kind: (list ? spec.slice(0, -2) : spec) as FieldKind, list });
    return this;
  }

  /** Declares several fields at once. */
  setFields(fields: Record<string, FieldSpec>): this {
    for (const [name, spec] of Object.entries(fields)) this.field(name, spec);
    return this;
  }

  /** Fails early on a configuration that cannot make requests. */
  check(): void {
    if (!/^https?:\/\//.test(this.url)) {
      throw new EntityClientError(`${this.entityClass}: setUrl() needs an http(s) URL, got "${this.url}"`);
    }
    if (!this.name) throw new EntityClientError(`${this.entityClass}: setName() was not called`);
    if (!this.fields.has(this.identifierKey)) this.field(this.identifierKey, "auto");
  }
}
