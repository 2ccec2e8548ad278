#!/usr/bin/env node
/**
 * `gpucloud`: look at the GPU cloud's catalog before writing a stack. It reads the same
 * credential variables as the scripts Terraform runs, and selects and sorts with the same code
 * as `Flavors`, so what it lists is what a `Flavors` with the same filter would find.
 */
import { parseArgs } from "node:util";

import { describeFilter, describeOffer, type FlavorFilter, selectFlavors } from "../client";
import { CredentialEnv, DEFAULT_ENV_PREFIX } from "../protocol";
import { ConfigError, type ConfigReader, envPrefixOf, isHttpUrl, secretValues } from "../shared/config";
import { type RuntimeContext, withClient } from "../shared/context";
import { errorMessage } from "../shared/error-message";
import { fetchCatalog } from "../shared/flavor-catalog";
import { normalizeFlavor } from "../shared/flavor-query";
import { createOutput, Redactor } from "../shared/output";
import { flavorTable } from "./flavor-table";

/**
 * The exit codes, one per kind of failure, so that a pipeline can tell a command typed wrong from
 * a secret its job lacks and from an API that said no (docs/flavors.md has the same table).
 */
export const ExitCode = {
  OK: 0,
  /** The API: unreachable, the credentials refused, no such region, or anything else that failed. */
  API: 1,
  USAGE: 2,
  /** A variable is missing or invalid: nothing was sent to the API. */
  CONFIGURATION: 3,
} as const;

/** What the configuration's messages say to a user of this CLI: the shell's environment and --base-url. */
export const CLI_READER: ConfigReader = {
  environment: "in this shell's environment",
  run: "one gpucloud command",
  addressOption: () => "pass --base-url URL",
  addressOverride: (_envPrefix, variable, account) => `--base-url, which overrides ${variable}; ${account}`,
};

const HELP = `Usage: gpucloud flavors [options]

Lists the GPU flavors that match, cheapest first (then by name), as a table or as JSON.
Matching is that of the Flavors construct: a GPU model matches on whole leading dash-separated
segments, ignoring case and the -spot suffix (--gpu H100 matches H100-80G-SXM5 and
h100-80g-pcie-spot; --gpu H100-80G does not match H100-94G-NVL); region ids ignore case.

Options (repeat --region and --gpu to accept several):
  --region ID         only this region (one API call per region)
  --gpu MODEL         only this GPU model
  --gpu-count N       exactly N GPUs
  --min-gpu-count N   at least N GPUs
  --min-cpu N         at least N CPU cores
  --min-ram GB        at least GB of RAM
  --min-disk GB       at least GB of root disk
  --in-stock          only flavors the API reports in stock
  --spot              only spot flavors
  --no-spot           no spot flavors
  --max-price P       at most P per hour
  --json              print the flavors as JSON (the Flavors construct's field names)
  --base-url URL      the API's base URL (default: $${CredentialEnv.BASE_URL}, or <PREFIX>BASE_URL)
  --env-prefix PREFIX read another account's variables, as a GpuCloudAccount with that
                      envPrefix does: --env-prefix GPUCLOUD_PROD_ reads GPUCLOUD_PROD_BASE_URL,
                      GPUCLOUD_PROD_API_TOKEN, ... (default: ${DEFAULT_ENV_PREFIX})
  --verbose           print progress (login, retries) on stderr
  -h, --help          print this help

Environment (this shell's, the variables the Terraform scripts read; with --env-prefix, the
same names with that prefix instead of ${DEFAULT_ENV_PREFIX}):
  ${CredentialEnv.BASE_URL.padEnd(24)}  the API's base URL, unless --base-url is given
  ${CredentialEnv.API_TOKEN.padEnd(24)}  an API token (no login); used when set
  ${CredentialEnv.USERNAME.padEnd(24)}  else log in as this user, with
  ${CredentialEnv.PASSWORD.padEnd(24)}  the password (plain text), or
  ${CredentialEnv.PASSWORD_MD5.padEnd(24)}  its md5 (32 hex characters)
  ${CredentialEnv.TIMEOUT_SECONDS.padEnd(24)}  time budget of the command, retries included
                            (default 120; never prefixed)
No account's secrets are ever printed.

Exit status:
  ${ExitCode.OK}  the flavors were listed (also when none matches: the reason is on stderr)
  ${ExitCode.API}  the API: it cannot be reached, refused the credentials or has no such region
  ${ExitCode.USAGE}  bad usage: an unknown command or option, or a bad option value
  ${ExitCode.CONFIGURATION}  configuration: a variable above is missing or invalid (nothing was sent)
`;

export interface CliIo {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  writeStdout(text: string): void;
  writeStderr(text: string): void;
}

class UsageError extends Error {}

interface FlavorsCommand {
  readonly filter: FlavorFilter;
  readonly json: boolean;
  readonly verbose: boolean;
  readonly baseUrl?: string;
  readonly envPrefix: string;
}

/** Runs the CLI and returns the exit code ({@link ExitCode}). Never throws; every line it prints is redacted. */
export async function runCli(io: CliIo): Promise<number> {
  const redactor = new Redactor(secretValues(io.env));
  const stderr = (text: string) => io.writeStderr(redactor.redact(text));
  const [command, ...rest] = io.argv;
  if (command === undefined) {
    io.writeStderr(HELP);
    return ExitCode.USAGE;
  }
  if (command === "help" || command === "-h" || command === "--help") {
    io.writeStdout(HELP);
    return ExitCode.OK;
  }
  try {
    if (command !== "flavors") throw new UsageError(`unknown command "${command}"; expected: flavors`);
    const parsed = parseFlavorsArgs(rest);
    if (parsed === "help") {
      io.writeStdout(HELP);
      return ExitCode.OK;
    }
    return await listFlavors(parsed, io, redactor);
  } catch (err) {
    stderr(`gpucloud: error: ${errorMessage(err)}\n`);
    if (err instanceof UsageError) {
      stderr("Run `gpucloud --help` for the options.\n");
      return ExitCode.USAGE;
    }
    return err instanceof ConfigError ? ExitCode.CONFIGURATION : ExitCode.API;
  }
}

async function listFlavors(cmd: FlavorsCommand, io: CliIo, redactor: Redactor): Promise<number> {
  const out = createOutput(cmd.verbose ? io.writeStderr : () => undefined, redactor);
  const ctx: RuntimeContext = { env: io.env, cwd: process.cwd(), out, configReader: CLI_READER };
  const groups = await withClient(ctx, cmd.baseUrl, (client) => fetchCatalog(client, [cmd.filter]), cmd.envPrefix);
  const matches = selectFlavors(groups, cmd.filter);
  if (cmd.json) {
    io.writeStdout(redactor.redact(`${JSON.stringify(matches.map(normalizeFlavor), null, 2)}\n`));
  } else if (matches.length > 0) {
    io.writeStdout(redactor.redact(`${flavorTable(matches)}\n`));
  }
  if (matches.length === 0) {
    io.writeStderr(redactor.redact(`no flavor matches (${describeFilter(cmd.filter)}). ${describeOffer(groups, cmd.filter)}\n`));
  }
  return ExitCode.OK;
}

function parseFlavorsArgs(args: readonly string[]): FlavorsCommand | "help" {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        region: { type: "string", multiple: true },
        gpu: { type: "string", multiple: true },
        "gpu-count": { type: "string" },
        "min-gpu-count": { type: "string" },
        "min-cpu": { type: "string" },
        "min-ram": { type: "string" },
        "min-disk": { type: "string" },
        "in-stock": { type: "boolean" },
        spot: { type: "boolean" },
        "no-spot": { type: "boolean" },
        "max-price": { type: "string" },
        json: { type: "boolean" },
        "base-url": { type: "string" },
        "env-prefix": { type: "string" },
        verbose: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    throw new UsageError(errorMessage(err));
  }
  if (values.help) return "help";
  if (values.spot && values["no-spot"]) throw new UsageError("give --spot or --no-spot, not both");
  const nonEmpty = (list: string[] | undefined, option: string) => {
    if (list?.some((v) => v.trim() === "")) throw new UsageError(`${option} needs a non-empty value`);
    return list?.map((v) => v.trim());
  };
  const count = (option: string) => {
    const text = values[option as "gpu-count"];
    if (text === undefined) return undefined;
    const n = Number(text);
    if (text.trim() === "" || !Number.isInteger(n) || n < 1)
      throw new UsageError(`--${option} must be a whole number of at least 1, got "${text}"`);
    return n;
  };
  let maxPricePerHour: number | undefined;
  if (values["max-price"] !== undefined) {
    maxPricePerHour = Number(values["max-price"]);
    if (values["max-price"].trim() === "" || !Number.isFinite(maxPricePerHour) || maxPricePerHour <= 0) {
      throw new UsageError(`--max-price must be a number greater than 0, got "${values["max-price"]}"`);
    }
  }
  const filter: FlavorFilter = {
    regionIds: nonEmpty(values.region, "--region"),
    gpus: nonEmpty(values.gpu, "--gpu"),
    gpuCount: count("gpu-count"),
    minGpuCount: count("min-gpu-count"),
    minCpu: count("min-cpu"),
    minRamGb: count("min-ram"),
    minDiskGb: count("min-disk"),
    inStockOnly: values["in-stock"] === true ? true : undefined,
    spot: values.spot ? true : values["no-spot"] ? false : undefined,
    maxPricePerHour,
  };
  const baseUrl = values["base-url"];
  // The value is not quoted back: an address may carry a password.
  if (baseUrl !== undefined && !isHttpUrl(baseUrl)) throw new UsageError("--base-url must be an http:// or https:// URL");
  let envPrefix: string;
  try {
    envPrefix = envPrefixOf(values["env-prefix"]);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new UsageError(`--env-prefix: ${err.message}`);
  }
  return { filter, json: values.json === true, verbose: values.verbose === true, baseUrl, envPrefix };
}

if (require.main === module) {
  void runCli({
    argv: process.argv.slice(2),
    env: process.env,
    writeStdout: (t) => process.stdout.write(t),
    writeStderr: (t) => process.stderr.write(t),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    () => {
      process.exitCode = ExitCode.API;
    },
  );
}
