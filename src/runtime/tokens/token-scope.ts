import { DEFAULT_ENV_PREFIX, PLANNED_ENV, TOKEN_ENV_FROM_TRIGGER, TokenEnv } from "../../protocol";
import { ConfigError, envPrefixOf } from "../../shared/config";
import type { RunRef, RuntimeContext } from "../../shared/context";
import { accountDigestIn, apiUrlIn } from "../account-identity";
import { handoffRunOfNonce } from "../run/run-folder";

/*
 * What both halves of an ApiToken's provisioner work on, from their environment: the resource's
 * triggers, the construct's key and workspace, the account and API address, and how messages name them.
 */

/**
 * The terraform run as the destroy half's hand-off knows it: `plantimestamp()` (TokenEnv.RUN), the
 * only run id a destroy-time provisioner can have. Undefined without it: then no create half takes
 * the hand-off over.
 */
export function releaseRunOf(ctx: RuntimeContext): string | undefined {
  return ctx.env[TokenEnv.RUN] || undefined;
}

/** What the plan showed the create half (PLANNED_ENV). */
export interface Planned {
  /** The run's nonce; undefined without one: the create half then logs in and walks on its own. */
  readonly nonce?: string;
  /** The run's id that hand-offs of the same run carry (see handoffRunOfNonce); undefined: none is taken over. */
  readonly handoffRun?: string;
  /** The id consumers of tokenId and token were planned with; "" when the read found none. */
  readonly id: string;
}

/** The create half's PLANNED_ENV, `<run nonce> <planned id>`; absent parts are empty. */
export function plannedOf(ctx: RuntimeContext): Planned {
  const text = ctx.env[PLANNED_ENV] ?? "";
  const space = text.indexOf(" ");
  const nonce = (space >= 0 ? text.slice(0, space) : text) || undefined;
  return { nonce, handoffRun: nonce && handoffRunOfNonce(nonce), id: space >= 0 ? text.slice(space + 1) : "" };
}

/** The run as its shared files know it (see ../run/run-folder.ts): the run's nonce and the workspace. */
export function runOf(planned: Planned, scope: TokenScope): RunRef | undefined {
  return planned.nonce ? { nonce: planned.nonce, workspace: scope.workspace } : undefined;
}

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
