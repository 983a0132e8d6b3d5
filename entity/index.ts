// Entity REST library: an ActiveRecord-style client, a low-level entity
// server, a Prisma entity manager and an express adapter. See entity/README.md.

export { type EntityClass, EntityClient, type EntityId, type FindAllOptions } from "./client/client.js";
export { EntityConfiguration, type FieldKind, type FieldSpec } from "./client/configuration.js";
export { Entity } from "./client/entity.js";
export * from "./client/errors.js";
export { encodeForm } from "./client/form-encoding.js";
export { IdentityMap } from "./client/identity-map.js";
export {
  type ResponseFormat,
  type ResponseTransformer,
  StandardResponseTransformer,
  type TransformedResponse,
} from "./client/response-transformer.js";
export {
  FetchTransport,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from "./client/transport.js";
export {
  QueryFormatUrlGenerator,
  StandardUrlGenerator,
  type UrlGenerator,
  type UrlOptions,
} from "./client/url-generator.js";
export { createEntityRouter, type EntityRouterOptions } from "./http/express-adapter.js";
export { entityFastPath } from "./http/fast-path.js";
export { PrismaEntityManager } from "./prisma/prisma-entity-manager.js";
export type { ActionContext, ActionHandler } from "./server/actions.js";
export type { EntityManager, EntityRepository, FieldInfo, FieldType, Row } from "./server/entity-manager.js";
export { type EntityErrorCode, EntityServerError } from "./server/errors.js";
export type { RequestMap } from "./server/request-map.js";
export { type AliasOptions, type Authenticator, type EntityResponse, EntityServer } from "./server/server.js";
