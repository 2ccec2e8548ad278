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
   * `plantimestamp()`, destroy side only: the id of the terraform run, the same for every
   * provisioner of one plan's apply (a saved plan's too) and different for the next run. A
   * destroy-time provisioner may call it, as it refers to nothing but `self`. Only the create half
   * of the same run takes over what a destroy half handed off (see runtime/records/handoff.ts); the
   * create half has the run's id from the run's nonce (see {@link PLANNED_ENV}).
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
 * Environment of the `token-apply` provisioner beside {@link TokenEnv}: what the plan showed, from
 * the stack's plan-time read, as `<run nonce> <planned id>`:
 * - the run's nonce (STACK_READ_RUN_NONCE), which names the files the run's scripts share and
 *   carries the run's id for hand-offs (see {@link TokenEnv.RUN}); a destroy-time provisioner may
 *   refer to `self` alone, so the destroy half shares nothing and asks the API nothing;
 * - the id the read found for the token ("" when there is none, e.g. a create), which consumers of
 *   `tokenId` and `token` were planned with: the create half refuses to write to, or hand over,
 *   another token.
 * One value, not one per part: Terraform parses and validates every value of every provisioner at
 * each plan, so each one is paid per token (docs/performance.md).
 */
export const PLANNED_ENV = "GPUCLOUD_TOKEN_PLANNED";

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
 * runtime/records/handoff.ts, runtime/records/applied-record.ts, runtime/locks/name-lock.ts).
 */
export const HANDOFF_DIR = ".gpucloud-handoff";
