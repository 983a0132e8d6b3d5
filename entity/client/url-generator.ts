import { encodeForm } from "./form-encoding.js";

export interface UrlOptions {
  id?: string | number | bigint;
  action?: string;
  /** Sent in the query string. */
  parameters?: Record<string, unknown>;
}

/** Where an entity class's resource lives (its EntityConfiguration is one). */
export interface ResourceLocation {
  readonly url: string;
  readonly name: string;
  readonly responseType: string;
}

/** Builds request URLs for an entity class. */
export interface UrlGenerator {
  generate(config: ResourceLocation, options: UrlOptions): string;
}

/**
 * `{url}/{name}[/{id}][/{action}].{format}[?{parameters}]`, each path part
 * percent-encoded (so an id such as "a/b" stays one segment).
 */
export class StandardUrlGenerator implements UrlGenerator {
  generate(config: ResourceLocation, options: UrlOptions): string {
    let path = `${config.url}/${encodeURIComponent(config.name)}`;
    if (options.id !== undefined) path += `/${encodeURIComponent(String(options.id))}`;
    if (options.action !== undefined) path += `/${encodeURIComponent(options.action)}`;
    path += `.${config.responseType}`;
    const query = options.parameters ? encodeForm(options.parameters) : "";
    return query ? `${path}?${query}` : path;
  }
}

/** `{url}/{name}[/{id}][/{action}]?_format={format}&…`: for servers that take the format as a parameter. */
export class QueryFormatUrlGenerator implements UrlGenerator {
  generate(config: ResourceLocation, options: UrlOptions): string {
    let path = `${config.url}/${encodeURIComponent(config.name)}`;
    if (options.id !== undefined) path += `/${encodeURIComponent(String(options.id))}`;
    if (options.action !== undefined) path += `/${encodeURIComponent(options.action)}`;
    return `${path}?${encodeForm({ _format: config.responseType, ...options.parameters })}`;
  }
}
