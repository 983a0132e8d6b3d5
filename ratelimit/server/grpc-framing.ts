// gRPC's wire format over HTTP/2 as the fast path (fast-path.ts) needs it for a unary call:
// the 5-byte prefix of a message (compressed flag, big-endian length), the grpc-timeout
// header, and the status codes it answers with. Errors carry the status code grpc-js gives
// in the same case, so a client sees a call fail the same way on either server (the texts
// say more where grpc-js's are vague).

/** The gRPC status codes the fast path sends (their numbers are gRPC's own). */
export const Status = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAUTHENTICATED: 16,
} as const;

/** grpc-js's default limit of a received message, which the grpc-js server applies here too. */
export const MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024;

const PREFIX_BYTES = 5;

/** A call that ends with `code` and `details` in its trailers. */
export class CallError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(details);
  }
}

const TIMEOUT_UNIT_MS: Record<string, number> = {
  H: 3_600_000,
  M: 60_000,
  S: 1000,
  m: 1,
  u: 0.001,
  n: 0.000_001,
};

/**
 * grpc-timeout in milliseconds: at most 8 digits and a unit (H, M, S, m, u, n), as the
 * gRPC over HTTP/2 protocol writes it. A malformed value is the call's error (INTERNAL).
 */
export function grpcTimeoutMs(value: string): number {
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (!m) throw new CallError(Status.INTERNAL, `Invalid grpc-timeout value "${value}"`);
  return Number(m[1]) * TIMEOUT_UNIT_MS[m[2]!]!;
}

/** The one request message of a unary call, put together from its DATA frames. */
export class UnaryMessageReader {
  private readonly chunks: Buffer[] = [];
  private received = 0;
  /** The message's length once its prefix is in, -1 before. */
  private length = -1;

  constructor(
    private readonly method: string,
    private readonly maxBytes = MAX_RECEIVE_MESSAGE_BYTES,
  ) {}

  /** Takes a chunk of the request body; throws as soon as it cannot be a single message within the limit. */
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.received += chunk.length;
    if (this.length < 0 && this.received >= PREFIX_BYTES) {
      this.length = this.bytes(PREFIX_BYTES).readUInt32BE(1);
      if (this.length > this.maxBytes) {
        throw new CallError(
          Status.RESOURCE_EXHAUSTED,
          `Received message larger than max (${this.length} vs ${this.maxBytes})`,
        );
      }
    }
    if (this.length >= 0 && this.received > PREFIX_BYTES + this.length) {
      throw new CallError(Status.UNIMPLEMENTED, `${this.method} is unary: received a second request message`);
    }
  }

  /** At the end of the request body: the message, and whether its compressed flag is set. */
  finish(): { message: Buffer; compressed: boolean } {
    if (this.received === 0) {
      throw new CallError(
        Status.UNIMPLEMENTED,
        `${this.method} is unary: the request body ended without a message`,
      );
    }
    if (this.length < 0 || this.received < PREFIX_BYTES + this.length) {
      const wanted = this.length < 0 ? "a 5-byte message prefix" : `${PREFIX_BYTES + this.length} bytes`;
      throw new CallError(
        Status.INTERNAL,
        `request body ended inside a message (${this.received} bytes of ${wanted})`,
      );
    }
    const all = this.bytes(this.received);
    const flag = all[0]!;
    if (flag > 1) throw new CallError(Status.INTERNAL, `invalid message flags ${flag} (0 or 1 expected)`);
    return { message: all.subarray(PREFIX_BYTES), compressed: flag === 1 };
  }

  /** The first `n` received bytes in one buffer (usually the first chunk as it is). */
  private bytes(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= n) return first;
    const joined = Buffer.concat(this.chunks);
    this.chunks.length = 0;
    this.chunks.push(joined);
    return joined;
  }
}

/** `message` behind its 5-byte prefix (uncompressed), in a buffer of its own. */
export function frameMessage(message: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(PREFIX_BYTES + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, PREFIX_BYTES);
  return frame;
}
