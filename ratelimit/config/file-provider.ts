// The file provider: reads every `*.yaml` (and `*.yml`) file under
// RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY, builds them together and
// reloads them all when something changes. With RUNTIME_WATCH_ROOT=true (default)
// only a swap of the root symlink (`ln -sfn`, `mv -T`) triggers a reload; with false,
// any change in the configuration directory does.

import { type Dirent, existsSync, type FSWatcher, watch } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../../common/logger.js";
import type { Settings } from "../settings/environment.js";
import { SERVICE_STATS, type StatsStore } from "../stats/store.js";
import { buildConfig, type ConfigFile, type RateLimitConfig } from "./rules.js";

type ProviderSettings = Pick<
  Settings,
  | "runtimeRoot"
  | "runtimeSubdirectory"
  | "runtimeAppDirectory"
  | "runtimeIgnoreDotFiles"
  | "runtimeWatchRoot"
  | "mergeDomainConfig"
>;

export function configDirectory(s: ProviderSettings): string {
  return path.join(s.runtimeRoot, s.runtimeSubdirectory, s.runtimeAppDirectory);
}

/** All configuration files, sorted by path; each named `<appdir>.<relative.path>` like the reference's runtime keys. */
export async function readConfigFiles(s: ProviderSettings): Promise<ConfigFile[]> {
  const base = path.join(s.runtimeRoot, s.runtimeSubdirectory);
  const dir = configDirectory(s);
  const found: string[] = [];
  const walk = async (d: string) => {
    let entries: Dirent[];
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && d === dir) return;
      throw err;
    }
    for (const e of entries) {
      if (s.runtimeIgnoreDotFiles && e.name.startsWith(".")) continue;
      const full = path.join(d, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isFile() || e.isSymbolicLink()) {
        // Symbolic links are followed to files only (not into directories), as the reference does.
        if (e.isSymbolicLink() && !(await stat(full).catch(() => undefined))?.isFile()) continue;
        if (/\.ya?ml$/.test(e.name)) found.push(full);
      }
    }
  };
  await walk(dir);
  found.sort();
  return Promise.all(
    found.map(async (file) => ({
      name: path.relative(base, file).split(path.sep).join("."),
      text: await readFile(file, "utf8"),
    })),
  );
}

export class FileConfigProvider {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly settings: ProviderSettings,
    private readonly stats: StatsStore,
    private readonly logger: Logger,
    private readonly onConfig: (config: RateLimitConfig) => void,
  ) {}

  /** Loads all files; on success hands the new configuration over, on failure keeps the old one. */
  load(): Promise<void> {
    this.loading = this.loading.then(async () => {
      try {
        const files = await readConfigFiles(this.settings);
        const config = buildConfig(files, this.settings.mergeDomainConfig);
        this.stats.inc(SERVICE_STATS.configLoadSuccess);
        this.logger.info(
          { files: files.map((f) => f.name), domains: [...config.domains.keys()] },
          "rate limit configuration loaded",
        );
        this.onConfig(config);
      } catch (err) {
        this.stats.inc(SERVICE_STATS.configLoadError);
        this.logger.error(
          { err: (err as Error).message },
          `Error loading new configuration: ${(err as Error).message}`,
        );
      }
    });
    return this.loading;
  }

  /** Watches for changes; each burst of events (50 ms) causes one reload of every file. */
  watch(): void {
    const s = this.settings;
    const schedule = () => {
      if (this.stopped) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.load(), 50);
    };
    try {
      if (s.runtimeWatchRoot) {
        const parent = path.dirname(path.resolve(s.runtimeRoot));
        const name = path.basename(path.resolve(s.runtimeRoot));
        this.watcher = watch(parent, (_event, file) => {
          if (file === null || file === name) schedule();
        });
        this.logger.info({ directory: parent, root: name }, "watching the runtime root for symlink swaps");
      } else {
        const dir = configDirectory(s);
        if (!existsSync(dir)) {
          this.logger.warn(
            { directory: dir },
            "configuration directory does not exist; changes cannot be watched",
          );
          return;
        }
        try {
          this.watcher = watch(dir, { recursive: true }, schedule);
        } catch {
          this.watcher = watch(dir, schedule);
        }
        this.logger.info({ directory: dir }, "watching the configuration directory");
      }
      this.watcher.on("error", (err) =>
        this.logger.warn({ err: err.message }, "configuration watcher error"),
      );
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, "cannot watch the configuration; reloads are off");
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.watcher?.close();
    await this.loading;
  }
}
