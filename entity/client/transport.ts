export interface TransportRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface TransportResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

/** Sends one HTTP request. Throw only when no HTTP answer arrived; statuses are the client's business. */
export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>;
}

export interface FetchTransportOptions {
  /** Abort a request after this many milliseconds (default 30 000). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** The default transport: the platform's fetch (keep-alive, follows redirects). */
export class FetchTransport implements Transport {
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: FetchTransportOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetchImpl = options.fetch ?? fetch;
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    const response = await this.fetchImpl(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const headers: Record<string, string> = {};
    response.headers.forEach((value, key) => {
      headers[key] = value;
    });
    return { status: response.status, headers, body: await response.text() };
  }
}
