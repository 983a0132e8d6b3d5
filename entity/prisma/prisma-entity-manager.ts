import type {
  EntityManager,
  EntityRepository,
  FieldInfo,
  FieldType,
  ListQuery,
  RepositoryOptions,
  Row,
} from "../server/entity-manager.js";
import { type ModelInfo, readDataModel } from "./data-model.js";
import { GetBatcher } from "./get-batcher.js";
import { ListBatcher } from "./list-batcher.js";
import { isInvalidInput, isRecordNotFound, mapPrismaError } from "./prisma-errors.js";
import { SqlListReader, type SqlPool } from "./sql-list.js";

/** The subset of a Prisma model delegate the repository uses. */
interface ModelDelegate {
  findUnique(args: { where: Row }): Promise<Row | null>;
  findMany(args: { where: Row; skip?: number; take?: number; orderBy?: Row }): Promise<Row[]>;
  create(args: { data: Row }): Promise<Row>;
  update(args: { where: Row; data: Row }): Promise<Row>;
  delete(args: { where: Row }): Promise<Row>;
}

export interface PrismaEntityManagerOptions {
  /** Models to use instead of what is read from the client (e.g. for a client built another way). */
  models?: ModelInfo[];
  /**
   * The pg pool the client's adapter runs on: lists are then read in plain SQL where
   * that gives exactly Prisma's rows (entity/prisma/sql-list.ts), skipping Prisma's
   * per-row cost; everything else still goes through Prisma.
   */
  pool?: SqlPool;
}

/**
 * Serves any model of a generated Prisma client. Entity classes are model
 * names ("Config"); each repository uses the model's delegate
 * (`prisma.config`) and a configurable identifier field, which must be @id or
 * @unique.
 */
export class PrismaEntityManager implements EntityManager {
  private readonly models: Map<string, ModelInfo>;

  private readonly pool: SqlPool | undefined;

  constructor(
    private readonly prisma: object,
    options: PrismaEntityManagerOptions = {},
  ) {
    this.models = options.models ? new Map(options.models.map((m) => [m.name, m])) : readDataModel(prisma);
    this.pool = options.pool;
  }

  entityClasses(): string[] {
    return [...this.models.keys()];
  }

  repository(entityClass: string, options: RepositoryOptions = {}): EntityRepository {
    const model = this.models.get(entityClass);
    if (!model) {
      throw new Error(
        `unknown Prisma model "${entityClass}" (models: ${this.entityClasses().join(", ") || "none"})`,
      );
    }
    const delegateName = entityClass.charAt(0).toLowerCase() + entityClass.slice(1);
    const delegate = (this.prisma as Record<string, unknown>)[delegateName] as ModelDelegate | undefined;
    if (!delegate || typeof delegate.findUnique !== "function") {
      throw new Error(`the Prisma client has no delegate "${delegateName}" for model ${entityClass}`);
    }
    const fields = mergeFields(model.fields, options.fields ?? {}, entityClass);
    const identifier = options.identifier ?? "id";
    if (!fields.some((f) => f.name === identifier)) {
      throw new Error(`identifier "${identifier}" is not a field of ${entityClass}`);
    }
    if (model.uniqueFields && !model.uniqueFields.has(identifier)) {
      throw new Error(`identifier "${identifier}" of ${entityClass} must be @id or @unique`);
    }
    // Declared field types change how requests are parsed, not what the columns hold: the model's own are read.
    const sql =
      this.pool && model.table
        ? SqlListReader.of(this.pool, model.fields, model.table, identifier)
        : undefined;
    return new PrismaRepository(entityClass, identifier, fields, delegate, sql);
  }
}

function mergeFields(discovered: FieldInfo[], declared: Record<string, string>, model: string): FieldInfo[] {
  const byName = new Map(discovered.map((f) => [f.name, { ...f }]));
  for (const [name, spec] of Object.entries(declared)) {
    const list = spec.endsWith("[]");
    const type = (list ? spec.slice(0, -2) : spec) as FieldType;
    if (!byName.has(name) && discovered.length > 0) throw new Error(`"${name}" is not a field of ${model}`);
    byName.set(name, { ...byName.get(name), name, type, list });
  }
  return [...byName.values()];
}

class PrismaRepository implements EntityRepository {
  private readonly batcher: GetBatcher<Row>;
  private readonly lists: ListBatcher<Row>;

  constructor(
    readonly entityClass: string,
    readonly identifier: string,
    readonly fields: readonly FieldInfo[],
    private readonly delegate: ModelDelegate,
    sql?: SqlListReader,
  ) {
    this.batcher = new GetBatcher<Row>(
      (ids) => this.delegate.findMany({ where: { [identifier]: { in: ids } } }),
      (id) => this.delegate.findUnique({ where: this.where(id) }),
      (row) => String(row[identifier]),
    );
    const findMany = (where: Row, skip: number, take: number) =>
      this.delegate.findMany({ where, skip, take, orderBy: { [identifier]: "asc" } });
    this.lists = new ListBatcher<Row>(
      sql
        ? async (where, skip, take) => (await sql.list(where, skip, take)) ?? findMany(where, skip, take)
        : findMany,
    );
  }

  private where(id: unknown): Row {
    return { [this.identifier]: id };
  }

  async get(id: unknown): Promise<Row | null> {
    try {
      return await this.batcher.get(id);
    } catch (err) {
      if (isInvalidInput(err)) return null;
      return mapPrismaError(err);
    }
  }

  async list(query: ListQuery): Promise<Row[]> {
    try {
      return await this.lists.list(query.where, query.skip, query.take);
    } catch (err) {
      return mapPrismaError(err);
    }
  }

  async insert(data: Row): Promise<Row> {
    try {
      return await this.delegate.create({ data });
    } catch (err) {
      return mapPrismaError(err);
    }
  }

  async update(id: unknown, data: Row): Promise<Row | null> {
    try {
      if (Object.keys(data).length === 0) return await this.delegate.findUnique({ where: this.where(id) });
      return await this.delegate.update({ where: this.where(id), data });
    } catch (err) {
      if (isRecordNotFound(err)) return null;
      // An id PostgreSQL cannot parse names no row; a bad data value is the caller's error.
      if (isInvalidInput(err) && !(await this.exists(id))) return null;
      return mapPrismaError(err);
    }
  }

  async delete(id: unknown): Promise<Row | null> {
    try {
      return await this.delegate.delete({ where: this.where(id) });
    } catch (err) {
      if (isRecordNotFound(err) || isInvalidInput(err)) return null;
      return mapPrismaError(err);
    }
  }

  private async exists(id: unknown): Promise<boolean> {
    try {
      return (await this.delegate.findUnique({ where: this.where(id) })) !== null;
    } catch {
      return false;
    }
  }
}
