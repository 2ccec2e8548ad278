import type { Credentials } from "../client";
import {
  accountEnv,
  CredentialEnv,
  DEFAULT_ENV_PREFIX,
  ENV_PREFIX_PATTERN,
  RESERVED_ENV_PREFIXES,
  SECRET_ENV_NAME_PATTERN,
  SECRET_ENV_NAMES,
} from "../protocol";

/** Raised for a configuration the script cannot work with; the message says what to set. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export interface RuntimeConfig {
  readonly baseUrl: string;
  /** Where the base URL came from and whose account it is, for messages (`GPUCLOUD_BASE_URL, account GPUCLOUD_`). */
  readonly baseUrlSource: string;
  readonly credentials: Credentials;
  /** Budget of this script run, shared by all its requests, retries and waits included. */
  readonly totalTimeoutMs: number;
  /** How the credentials were given, for the log (never the values). */
  readonly credentialSource: string;
  /** What to change when the API keeps throttling (HTTP 429): the budget, and an API token instead of a password. */
  readonly rateLimitAdvice: string;
}

/**
 * Who reads the configuration, as its messages name where to set a variable and what else can
 * give the API's address: the script Terraform runs ({@link TERRAFORM_SCRIPT}, the default) or
 * the `gpucloud` CLI, whose user sets them somewhere else.
 */
export interface ConfigReader {
  /** Where the variables are read from, as a message says it ("in the environment of …"). */
  readonly environment: string;
  /** What one budget of GPUCLOUD_TIMEOUT_SECONDS bounds ("one script run"). */
  readonly run: string;
  /** The other way to give the API's address, as "set <variable> …, or <this>" ends. */
  addressOption(envPrefix: string): string;
  /** Where an address that overrides `variable` came from, for messages about the address (`account` names whose). */
  addressOverride(envPrefix: string, variable: string, account: string): string;
}

/**
 * The script Terraform runs: the variables come from terraform's environment, and an address
 * from a construct's or a GpuCloudAccount's `baseUrl`. The script sees one `base_url` for both:
 * an account with a prefix of its own is the only one that can carry it (a construct with
 * `account` may not have a `baseUrl`); under the default prefix it may be either.
 */
const TERRAFORM_SCRIPT: ConfigReader = {
  environment: "in the environment of the process that runs terraform",
  run: "one script run",
  addressOption: (envPrefix) => `the baseUrl prop of the ${envPrefix === DEFAULT_ENV_PREFIX ? "construct" : "GpuCloudAccount"}`,
  addressOverride: (envPrefix, variable, account) =>
    envPrefix === DEFAULT_ENV_PREFIX
      ? `the baseUrl prop of the construct (or of its GpuCloudAccount), which overrides ${variable}; ${account}`
      : `the baseUrl of the GpuCloudAccount with envPrefix ${envPrefix}, which overrides ${variable}`,
};

const DEFAULT_TIMEOUT_SECONDS = 120;
/** Bounds of GPUCLOUD_TIMEOUT_SECONDS: one second to one day (well inside what Node's timers accept). */
const MIN_TIMEOUT_SECONDS = 1;
const MAX_TIMEOUT_SECONDS = 86_400;

type AccountEnv = ReturnType<typeof accountEnv>;

function credentialsHelp(names: AccountEnv, reader: ConfigReader): string {
  return (
    `set ${names.API_TOKEN}, or ${names.USERNAME} with ${names.PASSWORD} ` +
    `(plain text) or ${names.PASSWORD_MD5} (its md5 hex), ${reader.environment}`
  );
}

/**
 * The secret values present in an environment, for redaction: those of every account, whether
 * this run uses it or not (any `<prefix>PASSWORD`, `<prefix>PASSWORD_MD5`, `<prefix>API_TOKEN`).
 */
export function secretValues(env: NodeJS.ProcessEnv): string[] {
  const names = new Set(SECRET_ENV_NAMES);
  for (const name of Object.keys(env)) if (SECRET_ENV_NAME_PATTERN.test(name)) names.add(name);
  return [...names].map((name) => env[name]).filter((v): v is string => !!v);
}

/** An account's prefix as the script receives it: "" or absent is the default account; anything else is checked. */
export function envPrefixOf(value: string | undefined): string {
  if (value === undefined || value === "") return DEFAULT_ENV_PREFIX;
  if (!ENV_PREFIX_PATTERN.test(value) || RESERVED_ENV_PREFIXES.includes(value)) {
    throw new ConfigError(
      `the account's environment prefix must be upper-case letters, digits and "_", end with "_" and not be ` +
        `${RESERVED_ENV_PREFIXES.join(", ")} (e.g. GPUCLOUD_PROD_), got ${JSON.stringify(value.slice(0, 60))}`,
    );
  }
  return value;
}

/** The budget of one run (GPUCLOUD_TIMEOUT_SECONDS, range-checked), in ms. */
function runBudgetMs(env: NodeJS.ProcessEnv, reader: ConfigReader = TERRAFORM_SCRIPT): number {
  const timeoutText = nonEmpty(env[CredentialEnv.TIMEOUT_SECONDS]);
  const timeoutSeconds = timeoutText === undefined ? DEFAULT_TIMEOUT_SECONDS : Number(timeoutText);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < MIN_TIMEOUT_SECONDS || timeoutSeconds > MAX_TIMEOUT_SECONDS) {
    throw new ConfigError(
      `${CredentialEnv.TIMEOUT_SECONDS} must be a number of seconds from ${MIN_TIMEOUT_SECONDS} to ${MAX_TIMEOUT_SECONDS} ` +
        `(the budget of ${reader.run}), got "${String(timeoutText).slice(0, 40)}"`,
    );
  }
  return Math.round(timeoutSeconds * 1000);
}

/** {@link runBudgetMs}, or the default where the value is unusable (the command itself reports that). */
export function runBudgetMsOrDefault(env: NodeJS.ProcessEnv): number {
  try {
    return runBudgetMs(env);
  } catch {
    return DEFAULT_TIMEOUT_SECONDS * 1000;
  }
}

/**
 * Reads the connection settings of one account from the environment: the variables named with
 * `envPrefix` (GPUCLOUD_ for the default account). `baseUrlOverride` is the optional, non-secret
 * address given otherwise (a construct's or an account's `baseUrl`, the CLI's `--base-url`). A
 * message names only this account's variables, and says where to set them as `reader` does.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv,
  baseUrlOverride?: string,
  envPrefix: string = DEFAULT_ENV_PREFIX,
  reader: ConfigReader = TERRAFORM_SCRIPT,
): RuntimeConfig {
  const prefix = envPrefixOf(envPrefix);
  const names = accountEnv(prefix);
  const baseUrl = nonEmpty(baseUrlOverride) ?? nonEmpty(env[names.BASE_URL]);
  if (!baseUrl) {
    throw new ConfigError(`no API address: set ${names.BASE_URL} ${reader.environment}, or ${reader.addressOption(prefix)}`);
  }
  if (!isHttpUrl(baseUrl)) {
    throw new ConfigError(`${names.BASE_URL} must be an http:// or https:// URL`);
  }

  const totalTimeoutMs = runBudgetMs(env, reader);
  const credentials = credentialsFrom(env, names, reader);
  return {
    baseUrl,
    baseUrlSource: baseUrlSource(nonEmpty(baseUrlOverride) !== undefined, names.BASE_URL, prefix, reader),
    totalTimeoutMs,
    ...credentials,
    rateLimitAdvice: rateLimitAdvice(totalTimeoutMs, "apiToken" in credentials.credentials, names),
  };
}

/** Whether an address has the form the client takes: http:// or https:// and a host. */
export function isHttpUrl(text: string): boolean {
  return /^https?:\/\/[^/]/i.test(text.trim());
}

/** Where the base URL came from, as a user would look for it (the variable, or what overrides it). */
function baseUrlSource(fromConfiguration: boolean, variable: string, envPrefix: string, reader: ConfigReader = TERRAFORM_SCRIPT): string {
  const account = envPrefix === DEFAULT_ENV_PREFIX ? `the default account, ${DEFAULT_ENV_PREFIX}*` : `account ${envPrefix}*`;
  return fromConfiguration ? reader.addressOverride(envPrefix, variable, account) : `from ${variable}; ${account}`;
}

/** What a user can change when the API keeps throttling a run. */
function rateLimitAdvice(budgetMs: number, apiToken: boolean, names: AccountEnv): string {
  const budget = `to wait longer, raise ${CredentialEnv.TIMEOUT_SECONDS} (now ${Math.round(budgetMs / 1000)} s)`;
  if (apiToken) return budget;
  return (
    `${budget}; and set ${names.API_TOKEN} instead of ${names.USERNAME} and a password: an API token needs no login, ` +
    `and APIs limit logins far more tightly than other requests`
  );
}

function credentialsFrom(
  env: NodeJS.ProcessEnv,
  names: AccountEnv,
  reader: ConfigReader,
): { credentials: Credentials; credentialSource: string } {
  const apiToken = nonEmpty(env[names.API_TOKEN]);
  const username = nonEmpty(env[names.USERNAME]);
  // A password is used exactly as given: spaces at either end may be part of it.
  const password = env[names.PASSWORD] ? env[names.PASSWORD] : undefined;
  const passwordMd5 = nonEmpty(env[names.PASSWORD_MD5]);
  const help = credentialsHelp(names, reader);

  if (apiToken) return { credentials: { apiToken }, credentialSource: names.API_TOKEN };
  if (!username && !password && !passwordMd5) {
    throw new ConfigError(`no credentials: ${help}`);
  }
  if (!username) {
    throw new ConfigError(`${names.USERNAME} is not set: ${help}`);
  }
  if (password && passwordMd5) {
    throw new ConfigError(`set only one of ${names.PASSWORD} and ${names.PASSWORD_MD5}, not both`);
  }
  if (passwordMd5) {
    if (!/^[0-9a-f]{32}$/i.test(passwordMd5)) {
      throw new ConfigError(`${names.PASSWORD_MD5} must be 32 hexadecimal characters (an md5 hex digest)`);
    }
    return {
      credentials: { username, passwordMd5 },
      credentialSource: `${names.USERNAME} and ${names.PASSWORD_MD5}`,
    };
  }
  if (!password) {
    throw new ConfigError(`${names.USERNAME} is set but no password: set ${names.PASSWORD} or ${names.PASSWORD_MD5}`);
  }
  return { credentials: { username, password }, credentialSource: `${names.USERNAME} and ${names.PASSWORD}` };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
