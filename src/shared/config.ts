import type { Credentials } from "../client";
import { CredentialEnv, SECRET_ENV_NAMES } from "../runtime/protocol";

/** Raised for a configuration the script cannot work with; the message says what to set. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export interface RuntimeConfig {
  readonly baseUrl: string;
  readonly credentials: Credentials;
  /** Budget of this script run, shared by all its requests, retries and waits included. */
  readonly totalTimeoutMs: number;
  /** How the credentials were given, for the log (never the values). */
  readonly credentialSource: string;
}

const DEFAULT_TIMEOUT_SECONDS = 120;
/** Bounds of GPUCLOUD_TIMEOUT_SECONDS: one second to one day (well inside what Node's timers accept). */
const MIN_TIMEOUT_SECONDS = 1;
const MAX_TIMEOUT_SECONDS = 86_400;

const CREDENTIALS_HELP =
  `set ${CredentialEnv.API_TOKEN}, or ${CredentialEnv.USERNAME} with ${CredentialEnv.PASSWORD} ` +
  `(plain text) or ${CredentialEnv.PASSWORD_MD5} (its md5 hex), in the environment of the process that runs terraform`;

/** The secret values present in an environment, for redaction. */
export function secretValues(env: NodeJS.ProcessEnv): string[] {
  return SECRET_ENV_NAMES.map((name) => env[name]).filter((v): v is string => !!v);
}

/** The budget of one script run (GPUCLOUD_TIMEOUT_SECONDS, range-checked), in ms. */
function runBudgetMs(env: NodeJS.ProcessEnv): number {
  const timeoutText = nonEmpty(env[CredentialEnv.TIMEOUT_SECONDS]);
  const timeoutSeconds = timeoutText === undefined ? DEFAULT_TIMEOUT_SECONDS : Number(timeoutText);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < MIN_TIMEOUT_SECONDS || timeoutSeconds > MAX_TIMEOUT_SECONDS) {
    throw new ConfigError(
      `${CredentialEnv.TIMEOUT_SECONDS} must be a number of seconds from ${MIN_TIMEOUT_SECONDS} to ${MAX_TIMEOUT_SECONDS} ` +
        `(the budget of one script run), got "${String(timeoutText).slice(0, 40)}"`,
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
 * Reads the connection settings from the environment of the Terraform process. `baseUrlOverride`
 * is the construct's optional, non-secret `baseUrl` prop.
 */
export function loadConfig(env: NodeJS.ProcessEnv, baseUrlOverride?: string): RuntimeConfig {
  const baseUrl = nonEmpty(baseUrlOverride) ?? nonEmpty(env[CredentialEnv.BASE_URL]);
  if (!baseUrl) {
    throw new ConfigError(
      `no API address: set ${CredentialEnv.BASE_URL} in the environment of the process that runs terraform, ` +
        `or the construct's baseUrl prop`,
    );
  }
  if (!/^https?:\/\/[^/]/i.test(baseUrl)) {
    throw new ConfigError(`${CredentialEnv.BASE_URL} must be an http:// or https:// URL`);
  }

  return {
    baseUrl,
    totalTimeoutMs: runBudgetMs(env),
    ...credentialsFrom(env),
  };
}

function credentialsFrom(env: NodeJS.ProcessEnv): { credentials: Credentials; credentialSource: string } {
  const apiToken = nonEmpty(env[CredentialEnv.API_TOKEN]);
  const username = nonEmpty(env[CredentialEnv.USERNAME]);
  // A password is used exactly as given: spaces at either end may be part of it.
  const password = env[CredentialEnv.PASSWORD] ? env[CredentialEnv.PASSWORD] : undefined;
  const passwordMd5 = nonEmpty(env[CredentialEnv.PASSWORD_MD5]);

  if (apiToken) return { credentials: { apiToken }, credentialSource: CredentialEnv.API_TOKEN };
  if (!username && !password && !passwordMd5) {
    throw new ConfigError(`no credentials: ${CREDENTIALS_HELP}`);
  }
  if (!username) {
    throw new ConfigError(`${CredentialEnv.USERNAME} is not set: ${CREDENTIALS_HELP}`);
  }
  if (password && passwordMd5) {
    throw new ConfigError(`set only one of ${CredentialEnv.PASSWORD} and ${CredentialEnv.PASSWORD_MD5}, not both`);
  }
  if (passwordMd5) {
    if (!/^[0-9a-f]{32}$/i.test(passwordMd5)) {
      throw new ConfigError(`${CredentialEnv.PASSWORD_MD5} must be 32 hexadecimal characters (an md5 hex digest)`);
    }
    return {
      credentials: { username, passwordMd5 },
      credentialSource: `${CredentialEnv.USERNAME} and ${CredentialEnv.PASSWORD_MD5}`,
    };
  }
  if (!password) {
    throw new ConfigError(
      `${CredentialEnv.USERNAME} is set but no password: set ${CredentialEnv.PASSWORD} or ${CredentialEnv.PASSWORD_MD5}`,
    );
  }
  return { credentials: { username, password }, credentialSource: `${CredentialEnv.USERNAME} and ${CredentialEnv.PASSWORD}` };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
