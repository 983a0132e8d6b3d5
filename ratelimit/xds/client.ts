// CONFIG_TYPE=GRPC_XDS_SOTW: rules come from an xDS management server over the
// aggregated discovery stream (state of the world). Every response holds the full set of
// RateLimitConfig resources: it is built like a set of files; on success it replaces the
// rules and is ACKed (version_info + response_nonce), on failure the previous rules stay
// and it is NACKed with error_detail. A broken stream is reopened: every
// CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL until the server has answered once, then
// with exponential backoff (XDS_CLIENT_BACKOFF_*), reset by each response.

import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../common/logger.js";
import type { Node } from "../../proto/gen/envoy/config/core/v3/base.js";
import { AggregatedDiscoveryServiceClient } from "../../proto/gen/envoy/service/discovery/v3/ads.js";
import type {
  DiscoveryRequest,
  DiscoveryResponse,
} from "../../proto/gen/envoy/service/discovery/v3/discovery.js";
import type { RateLimitConfig } from "../config/rules.js";
import type { Settings, XdsSettings } from "../settings/environment.js";
import { SERVICE_STATS, type StatsStore } from "../stats/store.js";
import { buildXdsConfig, RATE_LIMIT_CONFIG_TYPE_URL } from "./convert.js";

/** grpc.rpc.Code INVALID_ARGUMENT: the code of a NACK's error_detail. */
const INVALID_ARGUMENT = 3;
/** Growth of the reconnect wait per consecutive failure. */
const BACKOFF_MULTIPLIER = 1.5;

/** The wait before reconnect attempt `n` (1-based) after the server has answered once. */
export function backoffDelay(s: XdsSettings, n: number, random = Math.random): number {
  const base = Math.min(s.backoffInitialIntervalMs * BACKOFF_MULTIPLIER ** (n - 1), s.backoffMaxIntervalMs);
  if (!s.backoffJitter) return base;
  const f = s.backoffRandomFactor;
  return base * (1 - f + 2 * f * random());
}

export class XdsConfigProvider {
  private readonly xds: XdsSettings;
  private readonly node: Node;
  private acceptedVersion = "";
  private started = false;
  private stopped = false;
  private call: grpc.ClientDuplexStream<DiscoveryRequest, DiscoveryResponse> | undefined;
  private wait: { timer: NodeJS.Timeout; done: () => void } | undefined;
  private loop: Promise<void> = Promise.resolve();
  private resolveFirst!: () => void;
  private readonly first = new Promise<void>((resolve) => {
    this.resolveFirst = resolve;
  });

  constructor(
    private readonly settings: Pick<Settings, "xds" | "mergeDomainConfig">,
    private readonly stats: StatsStore,
    private readonly logger: Logger,
    private readonly onConfig: (config: RateLimitConfig) => void,
  ) {
    this.xds = settings.xds;
    this.node = {
      id: this.xds.nodeId,
      cluster: "",
      metadata: Object.keys(this.xds.nodeMetadata).length ? { ...this.xds.nodeMetadata } : undefined,
      userAgentName: "ratelimit",
      clientFeatures: [],
    };
  }

  /** Starts the subscription (once); resolves when the first configuration is in force. */
  load(): Promise<void> {
    if (!this.started) {
      this.started = true;
      this.logger.info(
        { server: this.xds.serverUrl, node: this.xds.nodeId, tls: this.xds.useTls },
        "subscribing to rate limit configurations over xDS",
      );
      this.loop = this.run();
    }
    return this.first;
  }

  /** Changes arrive on the stream; nothing to watch. */
  watch(): void {}

  async stop(): Promise<void> {
    this.stopped = true;
    this.call?.cancel();
    if (this.wait) {
      clearTimeout(this.wait.timer);
      this.wait.done();
    }
    await this.loop;
  }

  private async run(): Promise<void> {
    let answeredOnce = false;
    let failures = 0;
    while (!this.stopped) {
      const answered = await this.stream();
      if (this.stopped) break;
      if (answered) {
        answeredOnce = true;
        failures = 0;
      }
      const delay = answeredOnce ? backoffDelay(this.xds, ++failures) : this.xds.connectRetryIntervalMs;
      this.logger.warn(
        { server: this.xds.serverUrl, retryInMs: Math.round(delay) },
        "xDS stream closed; reconnecting",
      );
      await new Promise<void>((done) => {
        this.wait = { timer: setTimeout(done, delay), done };
      });
      this.wait = undefined;
    }
  }

  private credentials(): grpc.ChannelCredentials {
    if (!this.xds.useTls) return grpc.credentials.createInsecure();
    const buf = (pem: string) => (pem ? Buffer.from(pem) : null);
    return grpc.credentials.createSsl(
      buf(this.xds.serverTlsCaCert),
      buf(this.xds.clientTlsKey),
      buf(this.xds.clientTlsCert),
    );
  }

  /** One stream, until it ends; true when the server sent at least one response. */
  private stream(): Promise<boolean> {
    const options: grpc.ClientOptions = {};
    if (this.xds.maxMsgSizeInBytes) options["grpc.max_receive_message_length"] = this.xds.maxMsgSizeInBytes;
    if (this.xds.useTls && this.xds.serverTlsSan)
      options["grpc.ssl_target_name_override"] = this.xds.serverTlsSan;
    const client = new AggregatedDiscoveryServiceClient(this.xds.serverUrl, this.credentials(), options);
    const metadata = new grpc.Metadata();
    for (const [k, v] of Object.entries(this.xds.additionalHeaders)) metadata.set(k, v);
    const call = client.streamAggregatedResources(metadata);
    this.call = call;
    let answered = false;
    return new Promise((resolve) => {
      let finished = false;
      const finish = (why: string) => {
        if (finished) return;
        finished = true;
        if (!this.stopped) this.logger.warn({ server: this.xds.serverUrl, reason: why }, "xDS stream ended");
        client.close();
        resolve(answered);
      };
      call.on("data", (res: DiscoveryResponse) => {
        answered = true;
        this.handle(call, res);
      });
      call.on("error", (err: grpc.ServiceError) => finish(err.details || err.message));
      call.on("status", (st: grpc.StatusObject) => finish(`status ${grpc.status[st.code]}: ${st.details}`));
      call.on("end", () => finish("closed by the server"));
      // The subscription; after a reconnect it carries the version in force.
      call.write(this.request({ versionInfo: this.acceptedVersion, responseNonce: "" }));
    });
  }

  private request(fields: Partial<DiscoveryRequest>): DiscoveryRequest {
    return {
      versionInfo: "",
      node: this.node,
      resourceNames: [],
      typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
      responseNonce: "",
      errorDetail: undefined,
      ...fields,
    };
  }

  private handle(
    call: grpc.ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>,
    res: DiscoveryResponse,
  ): void {
    if (res.typeUrl !== RATE_LIMIT_CONFIG_TYPE_URL) {
      const message = `unexpected type_url ${res.typeUrl}: this client subscribes to ${RATE_LIMIT_CONFIG_TYPE_URL} only`;
      this.logger.warn({ version: res.versionInfo }, message);
      call.write(this.nack(res, message));
      return;
    }
    try {
      const config = buildXdsConfig(res.resources, this.settings.mergeDomainConfig);
      this.onConfig(config);
      this.stats.inc(SERVICE_STATS.configLoadSuccess);
      this.acceptedVersion = res.versionInfo;
      this.logger.info(
        { version: res.versionInfo, domains: [...config.domains.keys()] },
        "rate limit configuration loaded from xDS",
      );
      call.write(this.request({ versionInfo: res.versionInfo, responseNonce: res.nonce }));
      this.resolveFirst();
    } catch (err) {
      const message = (err as Error).message;
      this.stats.inc(SERVICE_STATS.configLoadError);
      this.logger.error(
        { version: res.versionInfo, err: message },
        `Error loading new configuration: ${message}`,
      );
      call.write(this.nack(res, message));
    }
  }

  private nack(res: DiscoveryResponse, message: string): DiscoveryRequest {
    return {
      ...this.request({ versionInfo: this.acceptedVersion, responseNonce: res.nonce }),
      typeUrl: res.typeUrl,
      errorDetail: { code: INVALID_ARGUMENT, message, details: [] },
    };
  }
}
