import { EntityServerError, validationError } from "../server/errors.js";

interface PrismaLikeError {
  name?: string;
  code?: string;
  message?: string;
  meta?: { target?: unknown; driverAdapterError?: { cause?: { originalCode?: string; message?: string } } };
}

/** Error codes meaning "the input was wrong", not "the server broke". */
const INPUT_CODES = new Set([
  "P2000",
  "P2003",
  "P2004",
  "P2005",
  "P2006",
  "P2007",
  "P2011",
  "P2012",
  "P2013",
  "P2019",
  "P2020",
  "P2023",
]);

/** True when Prisma/PostgreSQL rejected a value as malformed (e.g. "nope" for a uuid column). */
export function isInvalidInput(err: unknown): boolean {
  const e = err as PrismaLikeError;
  const pg = e?.meta?.driverAdapterError?.cause?.originalCode;
  return e?.code === "P2007" || e?.code === "P2023" || pg === "22P02" || pg === "22007" || pg === "22008";
}

export function isRecordNotFound(err: unknown): boolean {
  return (err as PrismaLikeError)?.code === "P2025";
}

/**
 * Turns Prisma's errors into the server's typed errors: bad input is
 * VALIDATION, a unique violation is CONFLICT; anything else is rethrown
 * untouched (the server reports it as INTERNAL and logs it).
 */
export function mapPrismaError(err: unknown): never {
  const e = err as PrismaLikeError;
  if (e?.name === "PrismaClientValidationError") throw validationError(lastLine(e.message));
  if (e?.code === "P2002") {
    const target = e.meta?.target;
    throw new EntityServerError(
      "CONFLICT",
      `an entity with the same ${Array.isArray(target) ? target.join(", ") : "unique value"} already exists`,
    );
  }
  if (e?.code && INPUT_CODES.has(e.code)) {
    throw validationError(e.meta?.driverAdapterError?.cause?.message ?? lastLine(e.message));
  }
  throw err;
}

function lastLine(message: string | undefined): string {
  const lines = (message ?? "").split("\n").map((l) => l.trim());
  return lines.filter(Boolean).pop() ?? "invalid request";
}
