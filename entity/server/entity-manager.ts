/** Scalar kinds the server knows how to parse from request values and render. */
export type FieldType =
  | "String"
  | "Int"
  | "BigInt"
  | "Float"
  | "Decimal"
  | "Boolean"
  | "DateTime"
  | "Json"
  | "Bytes"
  | "Enum";

export interface FieldInfo {
  name: string;
  type: FieldType;
  /** A list column (PostgreSQL array). */
  list: boolean;
  /** A String stored as a PostgreSQL uuid: values are checked before any query. */
  uuid?: boolean;
}

export type Row = Record<string, unknown>;

export interface ListQuery {
  /** Equality filters on known fields, AND-combined, values already parsed. */
  where: Row;
  skip: number;
  take: number;
}

/**
 * The persisted entities behind one alias. Values handed in are already parsed
 * to the field types; the repository only talks to storage.
 */
export interface EntityRepository {
  readonly entityClass: string;
  readonly identifier: string;
  readonly fields: readonly FieldInfo[];
  get(id: unknown): Promise<Row | null>;
  /** Ordered by the identifier, so pages are stable. */
  list(query: ListQuery): Promise<Row[]>;
  insert(data: Row): Promise<Row>;
  /** null when no entity has this id. */
  update(id: unknown, data: Row): Promise<Row | null>;
  /** The deleted entity, or null when no entity has this id. */
  delete(id: unknown): Promise<Row | null>;
}

export interface RepositoryOptions {
  /** Field that identifies an entity (default "id"). */
  identifier?: string;
  /** Field types to use instead of (or in addition to) what the manager discovers. */
  fields?: Record<string, FieldType | `${FieldType}[]`>;
}

/** Persistence behind the server: turns an entity class name into a repository. */
export interface EntityManager {
  /** Names of the entity classes this manager can serve. */
  entityClasses(): string[];
  repository(entityClass: string, options?: RepositoryOptions): EntityRepository;
}
