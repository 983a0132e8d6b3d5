// What a failed call throws: the HTTP status with the API's error body
// ({"errorCode", "errorMessage"}), so callers branch on a code, not on text.

export class ApiError extends Error {
  override readonly name = "ApiError";
  /** The API's errorCode (VALIDATION, NOT_FOUND, RATE_LIMITED, ...), or HTTP_<status> without one. */
  readonly code: string;

  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const { errorCode, errorMessage } = (body ?? {}) as { errorCode?: unknown; errorMessage?: unknown };
    const code = typeof errorCode === "string" ? errorCode : `HTTP_${status}`;
    super(`${status} ${code}: ${typeof errorMessage === "string" ? errorMessage : JSON.stringify(body)}`);
    this.code = code;
  }
}

/** A generated call's answer: `data` on success, `error` (the parsed body) otherwise. */
export interface CallResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful call; an ApiError otherwise. */
export function unwrap<T>(result: CallResult<T>): T {
  if (result.data === undefined || !result.response.ok)
    throw new ApiError(result.response.status, result.error);
  return result.data;
}
