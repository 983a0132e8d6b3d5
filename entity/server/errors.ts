/** Machine-readable error codes of the entity server; each maps to one HTTP status. */
export const ERROR_STATUS = {
  VALIDATION: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  UNKNOWN_ENTITY: 404,
  UNKNOWN_ACTION: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  READ_ONLY: 405,
  NOT_ACCEPTABLE: 406,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
} as const;

export type EntityErrorCode = keyof typeof ERROR_STATUS;

/**
 * A failure the server renders as a response body in the requested format.
 * Every error the server can produce is one of these; anything else thrown by
 * an action or the entity manager is wrapped as INTERNAL (message withheld).
 */
export class EntityServerError extends Error {
  readonly status: number;
  /** Extra response headers a host should send (e.g. Allow). */
  headers?: Record<string, string>;

  constructor(
    readonly code: EntityErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "EntityServerError";
    this.status = ERROR_STATUS[code];
  }
}

export const validationError = (message: string, field?: string) =>
  new EntityServerError("VALIDATION", message, field);
