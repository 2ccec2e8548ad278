/**
 * The contract between the synth-time constructs (`src/constructs`) and the script that
 * Terraform runs (`src/runtime`). It is the only file of `src/runtime` that constructs may
 * import, so it holds names and plain types, nothing that does I/O.
 *
 * The script is invoked in two ways, and each has Terraform's own rules:
 *
 * - as the program of a `data "external"` block: `node <script> <command>`, the query as one
 *   JSON object on stdin (every value a string), and it must print one flat JSON object of
 *   strings on stdout. Errors: a message on stderr and a non-zero exit.
 * - as a `local-exec` provisioner: `node <script> <command>` through `/bin/sh -c`, with its
 *   inputs in environment variables (the provisioner's `environment` block). Output on
 *   stdout/stderr lands in Terraform's log.
 *
 * Secrets never travel through either channel: credentials come from the environment of the
 * Terraform process itself (see {@link CredentialEnv}).
 */

/** Sub-commands of the bundled script. */
export const RuntimeCommand = {
  /** external data source, plan time: list and filter flavors. */
  FLAVORS: "flavors",
  /** external data source, plan time: the cheapest match of the first filter that has one. */
  FLAVOR_PREFERENCE: "flavor-preference",
  /**
   * external data source, one per stack, at plan time and again after the writes (only when
   * some token is being written): every managed token's observation and attributes, and the
   * answer of every lookup of the stack whose query is literal, from one login, one list walk
   * and one catalog read per account and base URL.
   */
  STACK_READ: "stack-read",
  /**
   * `ephemeral "local_command"` (hashicorp/local >= 2.7), one per stack, at plan and at apply:
   * the values of the tokens whose `ephemeralToken` is used, by id, from one login and one list
   * walk per base URL (query on stdin and result on stdout as for `stack-read`, see
   * {@link TokenValueField}). The values reach Terraform only as ephemeral values, never the
   * state or a plan file.
   */
  TOKEN_VALUE: "token-value",
  /** local-exec, creation time: adopt, create, rename or update the token. */
  TOKEN_APPLY: "token-apply",
  /** local-exec, destroy time: hand the token to a replacement (an info line; removals are the roster's to report). */
  TOKEN_RELEASE: "token-release",
  /**
   * local-exec, destroy time, of the stack's token roster (`terraform_data`): warns about each
   * token that the stack no longer manages (its ApiToken removed, or the stack destroyed), which
   * stays active since the API has no delete. See {@link RosterEnv}.
   */
  TOKEN_ROSTER_RELEASE: "token-roster-release",
} as const;
/** The stack read's former command name, still run by configurations synthesized by earlier versions. */
export const FORMER_STACK_READ_COMMAND = "token-inventory";

export type RuntimeCommandName = (typeof RuntimeCommand)[keyof typeof RuntimeCommand];

/** Environment variables read from the Terraform process (never written into configuration). */
export const CredentialEnv = {
  BASE_URL: "GPUCLOUD_BASE_URL",
  USERNAME: "GPUCLOUD_USERNAME",
  PASSWORD: "GPUCLOUD_PASSWORD",
  PASSWORD_MD5: "GPUCLOUD_PASSWORD_MD5",
  API_TOKEN: "GPUCLOUD_API_TOKEN",
  /** Overall time budget of one script run in seconds, retries included. */
  TIMEOUT_SECONDS: "GPUCLOUD_TIMEOUT_SECONDS",
} as const;

/**
 * The prefix of the default account's variables (GPUCLOUD_BASE_URL, GPUCLOUD_API_TOKEN, ...). A
 * `GpuCloudAccount` names another prefix, e.g. `GPUCLOUD_PROD_`; its scripts then read
 * `GPUCLOUD_PROD_BASE_URL`, `GPUCLOUD_PROD_API_TOKEN` and so on. The prefix is not a secret.
 */
export const DEFAULT_ENV_PREFIX = "GPUCLOUD_";

/**
 * What an account's prefix may be: upper-case letters, digits and `_`, starting with a letter
 * or `_` (a shell variable name), ending in `_`. Checked at synth time and again by the script.
 */
export const ENV_PREFIX_PATTERN = /^[A-Z_][A-Z0-9_]*_$/;

/**
 * Prefixes an account may not use: the provisioners' own inputs are `GPUCLOUD_TOKEN_*`, so an
 * account prefixed so would read the construct's baseUrl as its address (GPUCLOUD_TOKEN_BASE_URL).
 */
export const RESERVED_ENV_PREFIXES: readonly string[] = ["GPUCLOUD_TOKEN_"];

/** The credential variables of the account with the prefix `envPrefix`. */
export function accountEnv(envPrefix: string): {
  readonly BASE_URL: string;
  readonly USERNAME: string;
  readonly PASSWORD: string;
  readonly PASSWORD_MD5: string;
  readonly API_TOKEN: string;
} {
  return {
    BASE_URL: `${envPrefix}BASE_URL`,
    USERNAME: `${envPrefix}USERNAME`,
    PASSWORD: `${envPrefix}PASSWORD`,
    PASSWORD_MD5: `${envPrefix}PASSWORD_MD5`,
    API_TOKEN: `${envPrefix}API_TOKEN`,
  };
}

/**
 * The names of every account's secret variables, whichever accounts a run uses: a name made of
 * a possible prefix and PASSWORD, PASSWORD_MD5 or API_TOKEN. (Hiding a value of some other tool's
 * `..._PASSWORD` as well costs nothing.)
 */
export const SECRET_ENV_NAME_PATTERN = /^[A-Z_][A-Z0-9_]*_(?:PASSWORD|PASSWORD_MD5|API_TOKEN)$/;

/** Names of secret variables, so that every output path can redact their values. */
export const SECRET_ENV_NAMES: readonly string[] = [CredentialEnv.PASSWORD, CredentialEnv.PASSWORD_MD5, CredentialEnv.API_TOKEN];

/**
 * The `stack-read` query and result are flat maps (the external protocol allows nothing
 * else), keyed `<slot>.<field>`. The slot is short and has no dots: the construct numbers its
 * stack's tokens `t0`, `t1`, ... and gives each token's construct address (the key of its
 * hand-offs and records) as the query field {@link InventoryQueryField.KEY}; without that field
 * the slot is the key. Short slots matter: Terraform keeps the result in the state and copies the
 * root module's state for every output it plans, and at 400 tokens 42-character keys made up half
 * of the result. Query fields: {@link InventoryQueryField}; result fields: {@link InventoryResultField}.
 */
export function inventoryKey(slot: string, field: string): string {
  return `${slot}.${field}`;
}

/**
 * A query key without a token key: present (value "true") only in the stack's read after the
 * writes, where a managed token that cannot be found is an error rather than an observation.
 */
export const INVENTORY_AFTER_WRITE = "after_write";

/** A query key without a token key: `terraform.workspace`, to find what this folder last applied. */
export const INVENTORY_WORKSPACE = "workspace";

/**
 * A query key without a token key, in the stack's plan-time read only: `plantimestamp()`, the id of
 * the terraform run (see {@link TokenEnv.RUN}). The read retires the hand-offs that earlier runs of
 * its workspace left unclaimed (see {@link INVENTORY_RETIRE_HANDOFFS}).
 */
export const INVENTORY_RUN = "run";

/**
 * A query key without a token key, beside {@link INVENTORY_RUN}: which unclaimed hand-offs of the
 * workspace the read retires. {@link RetireHandoffs.ALL} when the read surely runs before any
 * provisioner of its run (its query is literal, so Terraform reads it while planning);
 * {@link RetireHandoffs.OTHER_RUNS} when it may be deferred to the apply, after destroy halves of
 * its own run wrote theirs.
 */
export const INVENTORY_RETIRE_HANDOFFS = "retire_handoffs";

export const RetireHandoffs = {
  ALL: "all",
  OTHER_RUNS: "other_runs",
} as const;

/**
 * A result key without a token key: what the user must see even when the read succeeds (several
 * tokens carry a managed name; the token a name resolves to changed since the last apply), one
 * line each, "" when nothing. The stack's `check` block turns it into a warning of plan and apply:
 * Terraform shows an external program's stderr only when it fails.
 */
export const INVENTORY_WARNINGS = "warnings";

/**
 * A result key without a token key: the errors of the lookups the stack's read answers, one line
 * each, present only when some failed while the read also serves tokens. The read then succeeds,
 * so that a lookup matching nothing does not stop a plan of tokens (`-target`); the stack's token
 * roster fails a full plan with them (a precondition). A read without tokens fails as before.
 */
export const INVENTORY_LOOKUP_ERRORS = "lookup_errors";

export const InventoryQueryField = {
  /** The token's construct address; absent means the slot is the address. */
  KEY: "key",
  NAME: "name",
  /** Present only when the construct manages the description. */
  DESCRIPTION: "description",
  /** Optional, non-secret override of GPUCLOUD_BASE_URL. */
  BASE_URL: "base_url",
  /** The account's variable prefix; absent for the default account ({@link DEFAULT_ENV_PREFIX}). */
  ENV_PREFIX: "env_prefix",
  /** `previous.0`, `previous.1`, ...: the names to rename from, in order of preference. */
  PREVIOUS_PREFIX: "previous.",
  /**
   * "false" when the construct keeps the value out of the state (`valueInState: false`): the
   * token's `token` result field is then always "". Absent means "true".
   */
  VALUE_IN_STATE: "value_in_state",
  /**
   * Present only for a Flavors or FlavorPreference answered by the stack's read (see
   * {@link LookupKind}): the entry is then that lookup's query (the keys of {@link FlavorQuery} or
   * {@link FlavorPreferenceQuery}), and the result carries, under the same key, the fields of
   * {@link FlavorResult} or {@link FlavorPreferenceResult}.
   */
  LOOKUP: "lookup",
  /** A lookup's or a token's construct path, for error messages. */
  PATH: "path",
} as const;

/**
 * The value of a lookup's {@link InventoryQueryField.LOOKUP} field: the command whose answer the
 * stack's read gives for it (a lookup whose query holds an expression runs that command itself).
 */
export const LookupKind = {
  FLAVORS: RuntimeCommand.FLAVORS,
  FLAVOR_PREFERENCE: RuntimeCommand.FLAVOR_PREFERENCE,
} as const;
export type LookupKindName = (typeof LookupKind)[keyof typeof LookupKind];

/** Per managed token; all strings; "" where there is no such token. */
export const InventoryResultField = {
  // The token's attributes (TokenAttributes).
  ID: "id" satisfies keyof TokenAttributes,
  NAME: "name" satisfies keyof TokenAttributes,
  DESCRIPTION: "description" satisfies keyof TokenAttributes,
  /** The token's value (the construct marks it sensitive). */
  TOKEN: "token" satisfies keyof TokenAttributes,
  CREATED_AT: "created_at" satisfies keyof TokenAttributes,
  LAST_USED: "last_used" satisfies keyof TokenAttributes,
  /** "true" when a token of that name exists and matches every managed field. */
  IN_SYNC: "in_sync",
  /** A short human reason, e.g. `no API token is named "ci"` or `rename pending from "old"`. */
  REASON: "reason",
} as const;

/**
 * Query of `token-value` (stdin of the ephemeral `local_command`, one flat JSON object of strings):
 * `<token key>.id` (not a secret) and, when the construct sets one, `<token key>.base_url`. The
 * result (stdout, one JSON object, decoded by the constructs with jsondecode()) maps each token
 * key to the token's value.
 */
export const TokenValueField = {
  ID: "id",
  /** Optional, non-secret override of GPUCLOUD_BASE_URL. */
  BASE_URL: "base_url",
  /** The account's variable prefix (not a secret); absent for the default account. */
  ENV_PREFIX: "env_prefix",
} as const;

/** A token's attributes, as the inventory reports them (all strings). */
export interface TokenAttributes {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly token: string;
  readonly created_at: string;
  readonly last_used: string;
}

/**
 * Environment of the `token-apply` and `token-release` provisioners. The construct passes the
 * resource's triggers as one JSON object ({@link TokenEnv.TRIGGERS}), which the script spreads
 * into the other variables (see tokenEnvFromTriggers): Terraform evaluates every environment
 * value of every provisioner block at each plan's validation, so one value per block keeps that
 * cost flat.
 */
export const TokenEnv = {
  /** `jsonencode(self.triggers)`: the {@link TokenTrigger} values of this resource (the old ones on the destroy side). */
  TRIGGERS: "GPUCLOUD_TOKEN_TRIGGERS",
  NAME: "GPUCLOUD_TOKEN_NAME",
  /** Set only when the description is managed; absent means "leave it as it is". */
  DESCRIPTION: "GPUCLOUD_TOKEN_DESCRIPTION",
  /** Stable key of the construct within its stack; names the hand-off file. */
  KEY: "GPUCLOUD_TOKEN_KEY",
  /** `terraform.workspace`: hand-offs never cross workspaces. */
  WORKSPACE: "GPUCLOUD_TOKEN_WORKSPACE",
  /** JSON array of previous names (create side only); absent or "[]" for none. */
  PREVIOUS_NAMES: "GPUCLOUD_TOKEN_PREVIOUS_NAMES",
  /**
   * The construct's baseUrl; empty means GPUCLOUD_BASE_URL. A separate variable, so that an empty
   * value read from the triggers of an older state never blanks out the environment's URL.
   */
  BASE_URL: "GPUCLOUD_TOKEN_BASE_URL",
  /** The construct's path, for messages only. */
  PATH: "GPUCLOUD_TOKEN_PATH",
  /** The account's variable prefix; empty or absent means the default account. */
  ENV_PREFIX: "GPUCLOUD_TOKEN_ENV_PREFIX",
  /**
   * `plantimestamp()`: the id of the terraform run, the same for every provisioner of one plan's
   * apply (a saved plan's too) and different for the next run. A destroy-time provisioner may
   * call it, as it refers to nothing but `self`. Only the create half of the same run takes over
   * what a destroy half handed off (see runtime/handoff.ts).
   */
  RUN: "GPUCLOUD_TOKEN_RUN",
} as const;

/**
 * Keys of the `null_resource` triggers. A change of any of them replaces the resource, which
 * is what makes Terraform run the provisioners again.
 */
export const TokenTrigger = {
  NAME: "name",
  DESCRIPTION: "description",
  KEY: "key",
  BASE_URL: "base_url",
  WORKSPACE: "workspace",
  /** The construct's path (for the destroy side's messages). */
  PATH: "path",
  /** The account's variable prefix; present only for an account other than the default one. */
  ENV_PREFIX: "env_prefix",
  /**
   * "true" when the API matched the configuration at plan time; otherwise an expression that
   * is unknown during plan and becomes "true" at apply, so Terraform plans a replacement once
   * and then converges to no changes. A reviewer reads the drift in the plan as
   * `"api_in_sync" = "true" -> (known after apply)`.
   */
  API_IN_SYNC: "api_in_sync",
} as const;

/**
 * Environment of the `token-apply` provisioner beside {@link TokenEnv}: the id the plan-time read
 * found for the token ("" when there is none, e.g. a create), which consumers of `tokenId` and
 * `token` were planned with. The create half refuses to write to, or hand over, another token.
 */
export const PLANNED_ID_ENV = "GPUCLOUD_TOKEN_PLANNED_ID";

/**
 * Environment of the roster's destroy-time provisioner ({@link RuntimeCommand.TOKEN_ROSTER_RELEASE}).
 * A destroy-time provisioner sees only `self`, the roster as the last apply left it, and literal
 * values of the configuration it runs under, which is the new one: so it compares the two.
 */
export const RosterEnv = {
  /** `jsonencode(self.input)`: construct path → {@link RosterEntry}, as last applied. */
  WAS: "GPUCLOUD_ROSTER_WAS",
  /** A literal JSON {@link RosterNow}: the ApiTokens of the configuration being applied. */
  NOW: "GPUCLOUD_ROSTER_NOW",
} as const;

/** One token in the roster's `input`, under its construct path. */
export interface RosterEntry {
  readonly name: string;
  readonly id: string;
  /** The account's variable prefix; absent for the default account. */
  readonly env_prefix?: string;
}

/** The roster of the configuration being applied. */
export interface RosterNow {
  /** The construct paths of its ApiTokens. */
  readonly paths: readonly string[];
  /** Their literal names and previous names: a token under one of them is not removed, only moved. */
  readonly names: readonly string[];
}

/** The value of the `api_in_sync` trigger once applied. */
export const IN_SYNC = "true";

/** Which trigger fills which provisioner variable (see {@link TokenEnv.TRIGGERS}). */
export const TOKEN_ENV_FROM_TRIGGER: Readonly<Record<string, string>> = {
  [TokenTrigger.NAME]: TokenEnv.NAME,
  [TokenTrigger.DESCRIPTION]: TokenEnv.DESCRIPTION,
  [TokenTrigger.KEY]: TokenEnv.KEY,
  [TokenTrigger.WORKSPACE]: TokenEnv.WORKSPACE,
  [TokenTrigger.PATH]: TokenEnv.PATH,
  [TokenTrigger.BASE_URL]: TokenEnv.BASE_URL,
  [TokenTrigger.ENV_PREFIX]: TokenEnv.ENV_PREFIX,
};

/**
 * Folder (relative to Terraform's working directory) where a destroy-time provisioner leaves
 * the id of the token it let go, for the create-time provisioner of the replacing resource in
 * the same apply, where each create half records the token it applied (read by a later create half
 * to warn about a token left behind), and where the per-name create locks live. Records are scoped to
 * the workspace, the construct, the API and the terraform run ({@link TokenEnv.RUN}; see
 * runtime/handoff.ts, name-lock.ts).
 */
export const HANDOFF_DIR = ".gpucloud-handoff";

/**
 * The filter part of a flavor query (external data source, all values strings; absent or ""
 * = no filter). Lists are JSON arrays of strings, e.g. `["norway-east-1","us-east-1"]`.
 */
export interface FlavorFilterQuery {
  readonly region_id?: string;
  /** JSON array of region ids. */
  readonly region_ids?: string;
  readonly gpu?: string;
  /** JSON array of GPU models. */
  readonly gpus?: string;
  readonly gpu_count?: string;
  readonly min_gpu_count?: string;
  readonly min_cpu?: string;
  readonly min_ram_gb?: string;
  readonly min_disk_gb?: string;
  /** "true" | "false" */
  readonly in_stock_only?: string;
  /** "true" keeps only spot flavors, "false" excludes them. */
  readonly spot?: string;
  readonly max_price_per_hour?: string;
}

/** Query of `flavors`. */
export interface FlavorQuery extends FlavorFilterQuery {
  /** "true" lets an empty match succeed. */
  readonly allow_empty?: string;
  readonly base_url?: string;
  /** The account's variable prefix; absent for the default account. */
  readonly env_prefix?: string;
}

/** Result of `flavors`; nested data is JSON-encoded, as the external protocol requires. */
export interface FlavorResult {
  /** JSON array of matching flavors, sorted by price then name. */
  readonly flavors: string;
  /** JSON array of the matching ids, same order. */
  readonly ids: string;
  readonly count: string;
  readonly cheapest_id: string;
  readonly cheapest_name: string;
  readonly cheapest_price: string;
  readonly cheapest_region_id: string;
  readonly cheapest_gpu: string;
  readonly cheapest_gpu_count: string;
}

/**
 * Query of `flavor-preference`: the query is a flat map of strings, so choice `i` is written as
 * the keys of a {@link FlavorFilterQuery} prefixed with {@link flavorChoicePrefix}(i), e.g.
 * `choice0_gpu`, `choice1_region_ids`; `choice_count` says how many there are.
 */
export interface FlavorPreferenceQuery {
  readonly choice_count: string;
  readonly base_url?: string;
  /** The account's variable prefix; absent for the default account. */
  readonly env_prefix?: string;
  readonly [choiceKey: string]: string | undefined;
}

/** Prefix of the query keys of choice `index` (0-based). */
export function flavorChoicePrefix(index: number): string {
  return `choice${index}_`;
}

/** Result of `flavor-preference`. */
export interface FlavorPreferenceResult {
  /** The chosen flavor as a JSON object with the API's field names (missing fields null). */
  readonly flavor: string;
  readonly flavor_id: string;
  readonly flavor_name: string;
  readonly price: string;
  readonly region_id: string;
  readonly gpu: string;
  readonly gpu_count: string;
  /** 0-based index of the choice that matched. */
  readonly choice: string;
}
