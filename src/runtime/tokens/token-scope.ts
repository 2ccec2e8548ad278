import { DEFAULT_ENV_PREFIX, TOKEN_ENV_FROM_TRIGGER, TokenEnv } from "../../protocol";
import { ConfigError, envPrefixOf } from "../../shared/config";
import type { RuntimeContext } from "../../shared/context";
import { accountDigestIn, apiUrlIn } from "../account-identity";

/*
 * What both halves of an ApiToken's provisioner work on, from their environment: the resource's
 * triggers, the construct's key and workspace, the account and API address, and how messages name them.
 */

/** The provisioners' common inputs, from their environment. */
export interface TokenScope {
  readonly key: string;
  readonly workspace: string;
  /** The construct's path, for messages. */
  readonly path: string;
  readonly baseUrl?: string;
  /** The account's variable prefix (GPUCLOUD_ for the default account). */
  readonly envPrefix: string;
}

/**
 * The provisioner's context with the resource's triggers (TokenEnv.TRIGGERS, a JSON object) spread
 * into TokenEnv's variables. A trigger the resource does not have (description when unmanaged,
 * base_url, env_prefix) leaves its variable unset, whatever Terraform's own environment holds.
 * Without TokenEnv.TRIGGERS the variables are read as they are.
 */
export function withTriggerEnv(ctx: RuntimeContext): RuntimeContext {
  const json = ctx.env[TokenEnv.TRIGGERS];
  if (json === undefined) return ctx;
  let triggers: unknown;
  try {
    triggers = JSON.parse(json);
  } catch {
    throw new ConfigError(`${TokenEnv.TRIGGERS} is not a JSON object (set by the ApiToken construct)`);
  }
  if (triggers === null || typeof triggers !== "object" || Array.isArray(triggers)) {
    throw new ConfigError(`${TokenEnv.TRIGGERS} is not a JSON object (set by the ApiToken construct)`);
  }
  const env: NodeJS.ProcessEnv = { ...ctx.env };
  for (const [trigger, variable] of Object.entries(TOKEN_ENV_FROM_TRIGGER)) {
    const value = (triggers as Record<string, unknown>)[trigger];
    if (typeof value === "string") env[variable] = value;
    else delete env[variable];
  }
  return { ...ctx, env };
}

export function tokenScope(env: NodeJS.ProcessEnv): TokenScope {
  const key = env[TokenEnv.KEY];
  if (!key) throw new ConfigError(`${TokenEnv.KEY} is required (set by the ApiToken construct)`);
  return {
    key,
    workspace: env[TokenEnv.WORKSPACE] || "default",
    path: env[TokenEnv.PATH] ?? "",
    baseUrl: env[TokenEnv.BASE_URL] || undefined,
    envPrefix: envPrefixOf(env[TokenEnv.ENV_PREFIX]),
  };
}

/** The API this provisioner talks to: the construct's (or account's) baseUrl, else <prefix>BASE_URL. */
export function apiUrlOf(scope: TokenScope, env: NodeJS.ProcessEnv): string {
  return apiUrlIn(env, scope.envPrefix, scope.baseUrl);
}

/** The account this provisioner works on, as hand-offs, records and locks are keyed. */
export function accountDigestOf(scope: TokenScope, env: NodeJS.ProcessEnv): string {
  return accountDigestIn(env, scope.envPrefix, scope.baseUrl);
}

/** An account as a message names it: its prefix, when it is not the default one. */
export function accountLabel(scope: TokenScope): string {
  return scope.envPrefix === DEFAULT_ENV_PREFIX ? "" : ` (account ${scope.envPrefix}*)`;
}

export function constructLabel(scope: TokenScope): string {
  return scope.path ? `the ApiToken "${scope.path}"` : "the ApiToken";
}
