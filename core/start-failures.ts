import { status } from "@grpc/grpc-js";
import { PayloadConverterError, ValueError } from "@temporalio/common";
import type { Config } from "../generated/prisma/client.js";

// Why a delivery could not start, and whether trying again can help. A start
// that can never succeed as it is (an event over our bounds, a config row that
// cannot be used, a start Temporal refuses as invalid) is dead-lettered at
// once; anything else (Temporal or the database unavailable, a timeout) is
// retried with backoff by the broker, a bounded number of times.

/** What a permanent failure is about: the event itself, one config, or the start Temporal refused. */
export type FailureSource = "event" | "config" | "start";

/** A start that can never succeed as it is: retrying cannot help. */
export class PermanentStartFailure extends Error {
  constructor(
    message: string,
    readonly source: FailureSource,
  ) {
    super(message);
  }
}

/** The host shown in a delivery's search attributes and summary; a config whose endpoint is not a URL cannot be delivered to. */
export function endpointHost(config: Config): string {
  try {
    return new URL(config.endpoint).host;
  } catch {
    throw new PermanentStartFailure(
      `config ${config.id} cannot be used: its endpoint ${JSON.stringify(config.endpoint.slice(0, 200))} is not a URL`,
      "config",
    );
  }
}

/** The gRPC status of a failed Temporal call, from the client's ServiceError or the error itself. */
function grpcStatus(err: unknown): { code: number; details: string } | undefined {
  for (
    let e = err as { code?: unknown; details?: unknown; cause?: unknown } | undefined, i = 0;
    e && i < 3;
    i++
  ) {
    if (typeof e.code === "number") {
      // The native connection (eager start) leaves details empty and puts the text in the message.
      const details = typeof e.details === "string" && e.details ? e.details : String((e as Error).message);
      return { code: e.code, details };
    }
    e = e.cause as typeof e;
  }
  return undefined;
}

/**
 * A start that Temporal refuses for what it carries is permanent: the payload
 * converter rejecting the input, INVALID_ARGUMENT (a value over a server limit)
 * and a request over the gRPC message size. Everything else may pass later.
 */
export function permanentFailureOf(err: unknown): PermanentStartFailure | undefined {
  if (err instanceof PermanentStartFailure) return err;
  if (err instanceof ValueError || err instanceof PayloadConverterError) {
    const cause = err.cause instanceof Error ? ` (${err.cause.message})` : "";
    return new PermanentStartFailure(
      `Temporal's payload converter rejected the input: ${err.message}${cause}`,
      "start",
    );
  }
  const grpc = grpcStatus(err);
  if (!grpc) return undefined;
  const tooLarge = grpc.code === status.RESOURCE_EXHAUSTED && /larger than max/.test(grpc.details);
  if (grpc.code === status.INVALID_ARGUMENT || grpc.code === status.OUT_OF_RANGE || tooLarge) {
    return new PermanentStartFailure(`Temporal refused the start: ${grpc.details}`, "start");
  }
  return undefined;
}

/** A one-line account of a failure, for dead letters and logs (Prisma's messages end with their point). */
export function describeFailure(err: unknown): string {
  const grpc = grpcStatus(err);
  if (grpc) return `${(err as Error).message}: ${status[grpc.code] ?? grpc.code} ${grpc.details}`;
  const text = err instanceof Error ? err.message : String(err);
  return text.trim().split("\n").filter(Boolean).at(-1)?.trim() ?? text;
}
