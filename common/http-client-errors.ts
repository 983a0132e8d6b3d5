import { type Server, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";

/** A socket of an HTTP server: Node keeps the response in flight on it, if any. */
type InFlight = Duplex & { _httpMessage?: { headersSent: boolean } | null };

/** A rendered error body for a request Node's HTTP parser refused. */
export interface ClientErrorBody {
  contentType: string;
  body: string;
}

/**
 * Renders the answer to a request that never reached the application.
 * `rawRequest` is what the parser had read (may be empty or partial), so a
 * renderer can honour an Accept header or a `.xml` path when it sees one.
 */
export type ClientErrorRenderer = (status: number, message: string, rawRequest: string) => ClientErrorBody;

/** How long a refused connection's remaining input is read and dropped before it is closed. */
const LINGER_MS = 2000;

/** The parser's codes that deserve a status other than 400, and what to tell the caller. */
const BY_CODE: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, "request line and headers larger than the server accepts (16 KiB)"],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, "chunk extensions too large"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "the request was not received in time"],
};

const MESSAGES: Record<string, string> = {
  HPE_INVALID_METHOD: "malformed request line: invalid method",
  HPE_INVALID_URL: "malformed request line: invalid URL",
  HPE_INVALID_VERSION: "malformed request line: invalid HTTP version",
  HPE_INVALID_HEADER_TOKEN: "malformed header: invalid character in a header name",
  HPE_INVALID_CONTENT_LENGTH: "malformed Content-Length header",
  HPE_UNEXPECTED_CONTENT_LENGTH: "Content-Length given twice or together with Transfer-Encoding",
  HPE_INVALID_TRANSFER_ENCODING: "malformed Transfer-Encoding header",
  HPE_INVALID_CHUNK_SIZE: "malformed chunked body: invalid chunk size",
  HPE_INVALID_CONSTANT: "malformed request: unexpected bytes (is the Content-Length right?)",
  HPE_LF_EXPECTED: "malformed request: line ending expected",
  HPE_CR_EXPECTED: "malformed request: line ending expected",
  HPE_INVALID_EOF_STATE: "the connection closed before the request was complete",
  HPE_CLOSED_CONNECTION:
    "data after the end of a request on a connection that asked to be closed (is the Content-Length right?)",
};

/**
 * Replaces Node's default answer to malformed HTTP framing (an empty
 * plain-text 400/431) with a rendered error body naming the problem, then
 * closes the connection: after a framing error, nothing later on it can be trusted.
 */
export function answerClientErrors(server: Server, render: ClientErrorRenderer): void {
  server.on("clientError", (err: Error & { code?: string; rawPacket?: Buffer }, socket: InFlight) => {
    // As Node's own handler: never write into a response that has already started.
    if (err.code === "ECONNRESET" || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const code = err.code ?? "";
    const [status, known] = BY_CODE[code] ?? [400, MESSAGES[code]];
    const message = known ?? `malformed HTTP request (${code || err.message})`;
    const { contentType, body } = render(status, message, err.rawPacket?.toString("latin1") ?? "");
    // Lingering close: keep reading (and dropping) what the client still sends, for a
    // while, so the kernel does not answer that data with a reset, which can destroy the
    // answer before the client reads it (a client writing a 1 MB request line got EPIPE).
    socket.on("data", () => {});
    socket.resume();
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once("close", () => clearTimeout(linger));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${contentType}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
