// TLS for the gRPC listener (GRPC_SERVER_USE_TLS): the certificate chain and key, and
// for mutual TLS the client CA, read from files and reloaded when they change, so a
// rotated certificate is served to new connections without a restart. A rotated set
// that cannot be used (unreadable, not PEM, key not matching the certificate) is
// logged and the previous certificate stays in service.

import { X509Certificate } from "node:crypto";
import { type FSWatcher, readFileSync, watch } from "node:fs";
import path from "node:path";
import { createSecureContext, type SecureContextOptions } from "node:tls";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../common/logger.js";
import { type Settings, SettingsError } from "../settings/environment.js";

type TlsSettings = Pick<Settings, "grpcServerTlsCert" | "grpcServerTlsKey" | "grpcClientTlsCaCert">;

/** Events on the watched folders closer together than this are one reload (writers touch cert and key in turn). */
const RELOAD_DEBOUNCE_MS = 100;

interface TlsFiles {
  cert: Buffer;
  key: Buffer;
  ca: Buffer | undefined;
}

/** Reads and checks the files; the error names the variable and the file. */
function readTlsFiles(s: TlsSettings): TlsFiles {
  const read = (name: string, file: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`${name}=${file}: cannot read: ${(err as Error).message}`);
    }
  };
  const files: TlsFiles = {
    cert: read("GRPC_SERVER_TLS_CERT", s.grpcServerTlsCert),
    key: read("GRPC_SERVER_TLS_KEY", s.grpcServerTlsKey),
    ca: s.grpcClientTlsCaCert ? read("GRPC_CLIENT_TLS_CACERT", s.grpcClientTlsCaCert) : undefined,
  };
  try {
    new X509Certificate(files.cert);
  } catch (err) {
    throw new Error(
      `GRPC_SERVER_TLS_CERT=${s.grpcServerTlsCert}: not a PEM certificate: ${(err as Error).message}`,
    );
  }
  if (files.ca) {
    try {
      new X509Certificate(files.ca);
    } catch (err) {
      throw new Error(
        `GRPC_CLIENT_TLS_CACERT=${s.grpcClientTlsCaCert}: not a PEM certificate: ${(err as Error).message}`,
      );
    }
  }
  try {
    // Builds an OpenSSL context the way the server will: a key not matching the certificate fails here.
    createSecureContext(contextOptions(files));
  } catch (err) {
    throw new Error(
      `GRPC_SERVER_TLS_KEY=${s.grpcServerTlsKey}: unusable with GRPC_SERVER_TLS_CERT=${s.grpcServerTlsCert}: ${(err as Error).message}`,
    );
  }
  return files;
}

function contextOptions(files: TlsFiles): SecureContextOptions {
  return { cert: files.cert, key: files.key, ...(files.ca ? { ca: files.ca } : {}) };
}

function describe(cert: Buffer): Record<string, string> {
  const x = new X509Certificate(cert);
  return { subject: x.subject.replaceAll("\n", ", "), notAfter: x.validTo, fingerprint256: x.fingerprint256 };
}

const same = (a: Buffer | undefined, b: Buffer | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.equals(b));

/**
 * Server credentials whose secure context can be replaced: grpc-js installs the
 * options given to `updateSecureContextOptions` on its TLS server with
 * `setSecureContext`, which applies to connections accepted from then on.
 */
class ReloadableServerCredentials extends grpc.ServerCredentials {
  constructor(initial: SecureContextOptions, mutual: boolean) {
    // With a client CA the client must present a certificate that chains to it.
    super({ requestCert: mutual, rejectUnauthorized: mutual }, initial);
  }

  replace(options: SecureContextOptions): void {
    this.updateSecureContextOptions(options);
  }

  override _equals(other: grpc.ServerCredentials): boolean {
    return this === other;
  }
}

export interface GrpcServerTls {
  credentials: grpc.ServerCredentials;
  /** Re-reads the files now; false (and logged) when they cannot be used. */
  reload(): boolean;
  close(): void;
}

/**
 * Loads the certificate files (a SettingsError naming the bad file when they cannot
 * be used at start) and watches their folders. Folders rather than files are watched
 * so that replacements by rename and Kubernetes' symlink swaps are seen too.
 */
export function createGrpcServerTls(settings: TlsSettings, logger: Logger): GrpcServerTls {
  let current: TlsFiles;
  try {
    current = readTlsFiles(settings);
  } catch (err) {
    throw new SettingsError([(err as Error).message]);
  }
  const credentials = new ReloadableServerCredentials(contextOptions(current), current.ca !== undefined);
  logger.info(
    { ...describe(current.cert), mutual: current.ca !== undefined },
    "gRPC server TLS certificate loaded",
  );

  const reload = (): boolean => {
    let next: TlsFiles;
    try {
      next = readTlsFiles(settings);
    } catch (err) {
      logger.error(
        { err: (err as Error).message },
        "gRPC server TLS files changed but cannot be used; keeping the previous certificate",
      );
      return false;
    }
    if (same(next.cert, current.cert) && same(next.key, current.key) && same(next.ca, current.ca))
      return true;
    current = next;
    credentials.replace(contextOptions(next));
    logger.info(describe(next.cert), "gRPC server TLS certificate reloaded");
    return true;
  };

  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(reload, RELOAD_DEBOUNCE_MS);
    timer.unref();
  };
  const folders = new Set(
    [settings.grpcServerTlsCert, settings.grpcServerTlsKey, settings.grpcClientTlsCaCert]
      .filter(Boolean)
      .map((f) => path.dirname(path.resolve(f))),
  );
  const watchers: FSWatcher[] = [];
  for (const folder of folders) {
    try {
      const w = watch(folder, { persistent: false }, schedule);
      w.on("error", (err) => logger.error({ folder, err: err.message }, "watching TLS files failed"));
      watchers.push(w);
    } catch (err) {
      logger.error(
        { folder, err: (err as Error).message },
        "cannot watch the TLS files' folder; certificates will not be reloaded",
      );
    }
  }

  return {
    credentials,
    reload,
    close() {
      clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}
