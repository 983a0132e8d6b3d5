// skbuild-settings: validate [tool.scikit-build] settings documents and evaluate their overrides.
//
// Exit codes: 0 valid (warnings allowed); 1 a document has errors (including malformed TOML or
// JSON); 2 usage error (bad flag, unreadable file); 3 evaluate: a matching override sets fail = true.
import { readFileSync } from "node:fs";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { ignoreClosedStdout } from "../common/closed-stdout.js";
import {
  BUILD_STATES,
  type BuildContext,
  type BuildState,
  chooseGeneration,
  type Diagnostic,
  DocumentParseError,
  decodeDocument,
  type EvaluationResult,
  evaluateDocument,
  formatDiagnostic,
  hostContext,
  type InputFormat,
  parseDocument,
  type SettingsDocument,
  schemaFor,
  type ValidationResult,
  validateDocument,
} from "../skbuild-settings/index.js";
import { isVersion } from "../skbuild-settings/pep440.js";

const EXIT_OK = 0;
const EXIT_INVALID = 1;
const EXIT_USAGE = 2;
const EXIT_FAIL_OVERRIDE = 3;

class UsageError extends Error {}

/** JSON for output; TOML integers beyond 2^53 arrive as bigint, printed as their digits. */
const toJson = (value: unknown) =>
  JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? v.toString() : v), 2);

type Loaded = { doc: SettingsDocument } | { parseError: DocumentParseError };

function load(file: string, inputFormat: string): Loaded {
  const format = inputFormat === "auto" ? undefined : (inputFormat as InputFormat);
  let bytes: Uint8Array;
  const source = file === "-" ? "<stdin>" : file;
  try {
    bytes = readFileSync(file === "-" ? 0 : file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === "ENOENT" ? "no such file" : e.code === "EISDIR" ? "is a directory" : e.message;
    throw new UsageError(`${source}: cannot read: ${why}`);
  }
  try {
    return { doc: parseDocument(decodeDocument(bytes, source, format), source, format) };
  } catch (err) {
    if (err instanceof DocumentParseError) return { parseError: err };
    throw err;
  }
}

function parseDiagnostic(err: DocumentParseError): Diagnostic {
  return { severity: "error", code: "parse", path: "", message: err.message };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function summary(errors: number, warnings: number): string {
  if (errors) return `${plural(errors, "error")}${warnings ? `, ${plural(warnings, "warning")}` : ""}`;
  return warnings ? `ok, ${plural(warnings, "warning")}` : "ok";
}

const versionArg =
  (what: string) =>
  (value: string): string => {
    if (!isVersion(value))
      throw new InvalidArgumentError(`expected a PEP 440 version for ${what}, got "${value}"`);
    return value;
  };

function collectEnv(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf("=");
  if (eq <= 0) throw new InvalidArgumentError(`expected NAME=VALUE, got "${value}"`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

interface ValidateFlags {
  format: "text" | "json";
  inputFormat: string;
  backendVersion?: string;
  quiet?: boolean;
}

function runValidate(files: string[], flags: ValidateFlags): number {
  const targets = files.length ? files : ["pyproject.toml"];
  const reports: {
    file: string;
    result: Pick<ValidationResult, "valid" | "errors" | "warnings" | "minimumVersion">;
  }[] = [];
  let exit = EXIT_OK;
  for (const file of targets) {
    let loaded: Loaded;
    try {
      loaded = load(file, flags.inputFormat);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      console.error(`skbuild-settings: ${err.message}`);
      exit = EXIT_USAGE;
      continue;
    }
    const result =
      "doc" in loaded
        ? validateDocument(loaded.doc, flags.backendVersion ? { backendVersion: flags.backendVersion } : {})
        : { valid: false, errors: [parseDiagnostic(loaded.parseError)], warnings: [] };
    if (!result.valid && exit === EXIT_OK) exit = EXIT_INVALID;
    reports.push({ file: file === "-" ? "<stdin>" : file, result });
  }
  if (flags.format === "json") {
    const files = reports.map(({ file, result }) => ({
      file,
      valid: result.valid,
      ...(result.minimumVersion !== undefined ? { minimumVersion: result.minimumVersion } : {}),
      errors: result.errors,
      warnings: result.warnings,
    }));
    process.stdout.write(`${toJson({ valid: exit === EXIT_OK, files })}\n`);
    return exit;
  }
  for (const { file, result } of reports) {
    if (flags.quiet && result.valid && !result.warnings.length) continue;
    const lines = [`${file}: ${summary(result.errors.length, result.warnings.length)}`];
    for (const d of [...result.errors, ...result.warnings]) lines.push(`  ${formatDiagnostic(d)}`);
    process.stdout.write(`${lines.join("\n")}\n`);
  }
  return exit;
}

interface EvaluateFlags {
  format: "text" | "json";
  inputFormat: string;
  backendVersion?: string;
  state?: BuildState;
  python?: string;
  implementationName?: string;
  implementationVersion?: string;
  platformSystem?: string;
  platformMachine?: string;
  platformNode?: string;
  fromSdist?: boolean;
  failed?: boolean;
  systemCmake?: string[];
  noSystemCmake?: boolean;
  cmakeWheel?: boolean;
  abiFlags?: string;
  env?: Record<string, string>;
  configSetting?: Record<string, string>;
  host: boolean;
  processEnv: boolean;
}

function contextFrom(flags: EvaluateFlags): BuildContext {
  const host = flags.host ? hostContext(flags.processEnv) : {};
  const ctx: BuildContext = { ...host };
  if (flags.backendVersion !== undefined) ctx.backendVersion = flags.backendVersion;
  if (flags.configSetting) ctx.configSettingArgs = flags.configSetting;
  if (!flags.processEnv) delete ctx.env;
  const set = <K extends keyof BuildContext>(key: K, value: BuildContext[K] | undefined) => {
    if (value !== undefined) ctx[key] = value;
  };
  set("state", flags.state);
  set("pythonVersion", flags.python);
  set("implementationName", flags.implementationName);
  set("implementationVersion", flags.implementationVersion);
  set("platformSystem", flags.platformSystem);
  set("platformMachine", flags.platformMachine);
  set("platformNode", flags.platformNode);
  set("fromSdist", flags.fromSdist ?? false);
  set("failed", flags.failed ?? false);
  set("systemCmake", flags.noSystemCmake ? [] : flags.systemCmake);
  set("cmakeWheel", flags.cmakeWheel);
  set("abiFlags", flags.abiFlags);
  if (flags.env) ctx.env = { ...(ctx.env ?? {}), ...flags.env };
  return ctx;
}

function runEvaluate(file: string | undefined, flags: EvaluateFlags): number {
  const target = file ?? "pyproject.toml";
  const loaded = load(target, flags.inputFormat); // UsageError propagates: exit 2
  const ctx = contextFrom(flags);
  const result: EvaluationResult =
    "doc" in loaded
      ? evaluateDocument(loaded.doc, ctx)
      : {
          valid: false,
          errors: [parseDiagnostic(loaded.parseError)],
          warnings: [],
          generation: chooseGeneration(flags.backendVersion, undefined),
          overrides: [],
          matched: [],
          fail: false,
          failOverrides: [],
          retryOnFailure: false,
        };
  const exit = !result.valid ? EXIT_INVALID : result.fail ? EXIT_FAIL_OVERRIDE : EXIT_OK;
  if (flags.format === "json") {
    const { env: _env, ...shownContext } = ctx;
    const report = {
      file: target === "-" ? "<stdin>" : target,
      valid: result.valid,
      context: { ...shownContext, env: Object.keys(ctx.env ?? {}).length ? "(set)" : "(empty)" },
      ...(result.minimumVersion !== undefined ? { minimumVersion: result.minimumVersion } : {}),
      settings: result.effective ?? null,
      matched: result.matched,
      overrides: result.overrides,
      fail: result.fail,
      failOverrides: result.failOverrides,
      retryOnFailure: result.retryOnFailure,
      errors: result.errors,
      warnings: result.warnings,
    };
    process.stdout.write(`${toJson(report)}\n`);
    return exit;
  }
  for (const d of [...result.errors, ...result.warnings]) console.error(formatDiagnostic(d));
  if (!result.valid) {
    const name = target === "-" ? "<stdin>" : target;
    console.error(`${name}: ${summary(result.errors.length, result.warnings.length)}; nothing evaluated`);
    return exit;
  }
  process.stdout.write(`${toJson(result.effective)}\n`);
  const matched = result.overrides.filter((o) => o.matched).map((o) => o.path);
  console.error(`matched overrides: ${matched.length ? matched.join(", ") : "none"}`);
  if (result.retryOnFailure)
    console.error("a failed build would be retried (an override tests failed = true)");
  if (result.fail) {
    const which = result.failOverrides.map((i) => `overrides[${i}]`).join(", ");
    console.error(`error: the build fails at once: fail = true in matching ${which}`);
  }
  return exit;
}

function program(): Command {
  const cmd = new Command("skbuild-settings")
    .description(
      "Validate [tool.scikit-build] build settings and evaluate their overrides for a build context.",
    )
    .version("1.0.0", "-V, --version")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .addHelpText(
      "after",
      `
Exit codes: 0 valid (warnings allowed), 1 errors in a document, 2 usage error,
3 evaluate: a matching override sets fail = true.`,
    );

  addValidate(cmd);
  addEvaluate(cmd);
  addSchema(cmd);
  return cmd;
}

// Options that several commands take.
const formatOption = () =>
  new Option("--format <format>", "output: text, or json for machine-readable diagnostics")
    .choices(["text", "json"])
    .default("text");
const inputOption = () =>
  new Option("--input-format <format>", "how to parse input (auto: by extension, then content)")
    .choices(["auto", "toml", "json"])
    .default("auto");
const backendOption = () =>
  new Option(
    "--backend-version <version>",
    "backend version whose rules to follow (0.12 line below 1.0, else the 1.x line); default: chosen from minimum-version",
  ).argParser(versionArg("--backend-version"));

function addValidate(cmd: Command): void {
  cmd
    .command("validate")
    .description(
      "check settings documents (pyproject.toml, or JSON: the settings object or a pyproject-shaped object)",
    )
    .argument("[files...]", 'documents to check; "-" reads standard input', [])
    .addOption(formatOption())
    .addOption(inputOption())
    .addOption(backendOption())
    .option("-q, --quiet", "text output: print only documents with errors or warnings")
    .action((files: string[], flags: ValidateFlags) => {
      process.exitCode = runValidate(files, flags);
    });
}

/** evaluate: the build context comes from flags, else from this machine and its environment. */
function addEvaluate(cmd: Command): void {
  cmd
    .command("evaluate")
    .description("apply the overrides that match a build context and print the effective settings as JSON")
    .argument("[file]", 'document to evaluate (default ./pyproject.toml); "-" reads standard input')
    .addOption(new Option("--state <state>", "build state").choices(BUILD_STATES))
    .addOption(
      new Option("--python <version>", 'Python version, two parts ("3.12")').argParser(
        versionArg("--python"),
      ),
    )
    .option("--implementation-name <name>", 'interpreter implementation ("cpython", "pypy")')
    .addOption(
      new Option(
        "--implementation-version <version>",
        'interpreter version ("3.12.1", "3.13.0a1")',
      ).argParser(versionArg("--implementation-version")),
    )
    .option(
      "--platform-system <name>",
      'sys.platform value ("linux", "darwin", "win32"); default: this machine',
    )
    .option("--platform-machine <name>", 'machine type ("x86_64", "arm64", "AMD64"); default: this machine')
    .option("--platform-node <name>", "host name; default: this machine")
    .option("--from-sdist", "the build runs from an sdist")
    .option("--failed", "this is the retry after a failed build")
    .addOption(
      new Option("--system-cmake <version>", "CMake version found on the system (repeatable)").argParser(
        (v: string, prev: string[] | undefined) => collect(versionArg("--system-cmake")(v), prev),
      ),
    )
    .option("--no-system-cmake", "no CMake is installed on the system")
    .option("--cmake-wheel", "a CMake wheel is known for this system")
    .option("--no-cmake-wheel", "no CMake wheel is known for this system")
    .option("--abi-flags <flags>", 'sorted ABI flags ("" or "t")')
    .option(
      "--env <NAME=VALUE>",
      "environment variable (repeatable; added to this process's environment)",
      collectEnv,
    )
    .option(
      "--config-setting <NAME=VALUE>",
      "a -C config-setting given to the build, for declared config-settings (repeatable)",
      collectEnv,
    )
    .option("--no-process-env", "do not use this process's environment variables, only --env")
    .option("--no-host", "do not take platform-system/-machine/-node and environment from this machine")
    .addOption(formatOption())
    .addOption(inputOption())
    .addOption(backendOption())
    .action((file: string | undefined, raw: EvaluateFlags & { systemCmake?: string[] | false }) => {
      const flags: EvaluateFlags = { ...raw };
      if (raw.systemCmake === false) {
        flags.noSystemCmake = true;
        delete flags.systemCmake;
      }
      process.exitCode = runEvaluate(file, flags);
    });
}

function addSchema(cmd: Command): void {
  cmd
    .command("schema")
    .description("print the JSON Schema (draft-07) of the settings object of one line (0.12 or 1.x)")
    .argument("[file]", "a document whose minimum-version picks the line")
    .addOption(inputOption())
    .addOption(backendOption())
    .action((file: string | undefined, flags: { inputFormat: string; backendVersion?: string }) => {
      let generation = chooseGeneration(flags.backendVersion, undefined);
      if (file !== undefined && flags.backendVersion === undefined) {
        const loaded = load(file, flags.inputFormat);
        if ("parseError" in loaded) throw new UsageError(loaded.parseError.message);
        generation = validateDocument(loaded.doc).generation;
      }
      process.stdout.write(`${toJson(schemaFor(generation.line))}\n`);
    });
}

ignoreClosedStdout();
try {
  await program().parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    const clean = ["commander.helpDisplayed", "commander.version", "commander.help"].includes(err.code);
    process.exitCode = clean ? EXIT_OK : EXIT_USAGE;
  } else if (err instanceof UsageError) {
    console.error(`skbuild-settings: ${err.message}`);
    process.exitCode = EXIT_USAGE;
  } else {
    console.error(err);
    process.exitCode = EXIT_USAGE;
  }
}
