/** Base of every error the entity client throws. */
export class EntityClientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The request never got an HTTP answer (connection refused, DNS, timeout, aborted). */
export class EntityTransportError extends EntityClientError {
  constructor(
    readonly method: string,
    readonly url: string,
    cause: unknown,
  ) {
    super(`${method} ${url} failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/** The server answered with a non-2xx status. `code` and `serverMessage` come from the error body when it has one. */
export class EntityHttpError extends EntityClientError {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly body: string,
    readonly code?: string,
    readonly serverMessage?: string,
    readonly field?: string,
  ) {
    super(
      `${method} ${url} answered ${status}${code ? ` ${code}` : ""}${serverMessage ? `: ${serverMessage}` : ""}`,
    );
  }
}

/** 400: the server rejected the parameters; `field` names the culprit when known. */
export class EntityValidationError extends EntityHttpError {}
/** 401 or 403. */
export class EntityAuthenticationError extends EntityHttpError {}
/** 404: no such entity (or alias, or action: see `code`). */
export class EntityNotFoundError extends EntityHttpError {}
/** 405 on a read-only alias or an unsupported method. */
export class EntityMethodNotAllowedError extends EntityHttpError {}
/** 409: a unique value is already taken. */
export class EntityConflictError extends EntityHttpError {}

/** A 2xx answer the response transformer could not read. */
export class EntityResponseError extends EntityClientError {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly body: string,
    reason: string,
  ) {
    super(`${method} ${url}: unreadable response (${reason})`);
  }
}

export function httpErrorFor(
  method: string,
  url: string,
  status: number,
  body: string,
  detail: { code?: string; message?: string; field?: string },
): EntityHttpError {
  const cls =
    status === 400
      ? EntityValidationError
      : status === 401 || status === 403
        ? EntityAuthenticationError
        : status === 404
          ? EntityNotFoundError
          : status === 405
            ? EntityMethodNotAllowedError
            : status === 409
              ? EntityConflictError
              : EntityHttpError;
  return new cls(method, url, status, body, detail.code, detail.message, detail.field);
}
