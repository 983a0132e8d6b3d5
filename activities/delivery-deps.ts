import type pg from "pg";
import type { PrismaClient } from "../common/db/database.js";
import type { Logger } from "../common/logger.js";
import type { ConfigSecrets } from "../core/config-secrets.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import type { SignatureHeaderStyle } from "../core/options.js";
import type { BrokerConnections } from "./destinations/connections.js";
import type { LocalFirstSends } from "./local-first.js";
import type { OAuthTokens } from "./oauth-tokens.js";
import type { RateLimitGate } from "./rate-limit-gate.js";

/** What the delivery activities send and write with (delivery-activities.ts). */
export interface DeliveryDeps {
  prisma: PrismaClient;
  /** Prisma's pool, for the queries every delivery makes (core/config-rows.ts says why). */
  pool: pg.Pool;
  logger: Logger;
  sendTimeoutMs: number;
  /** The deployment's names of the signing headers (--signature-headers), for configs that set none. */
  signatureHeaders: SignatureHeaderStyle;
  rateLimit?: RateLimitGate | undefined;
  egress: EgressPolicy;
  /** Opens the config's secrets, read from the database at each send. */
  secrets: ConfigSecrets;
  /** OAuth tokens of the endpoints that want one, shared by the process's sends. */
  oauthTokens: OAuthTokens;
  /** Connections to the configs' broker destinations (Kafka, NATS, AMQP, SQS), shared by the process's sends. */
  brokers: BrokerConnections;
  /** Told as a delivery's POST leaves (workers/deliveries-in-flight.ts: a slow receiver stops counting). */
  onPost?: (workflowId: string) => void;
  /** Local first sends of this worker (--send-mode local-first): cool-downs and detached POSTs. */
  localFirst?: LocalFirstSends;
  /** Tells a delivery's workflow that its detached first send has written its row. */
  firstSendSettled?: (workflowId: string) => Promise<void>;
}

/** What a send uses (send-pipeline.ts), a delivery's or a batch's: all but the local first sends. */
export type SendDeps = Omit<DeliveryDeps, "localFirst" | "firstSendSettled">;
