/**
 * Environment of the `token-apply` and `token-release` provisioners. The construct passes the
 * resource's triggers as one JSON object ({@link TokenEnv.TRIGGERS}), which the script spreads
 * into the other variables (runtime/tokens/token-scope.ts): Terraform evaluates every environment
 * value of every provisioner block at each plan, so one value per block keeps that cost flat.
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
  /** The construct's (or its account's) baseUrl; absent means the account's BASE_URL variable. */
  BASE_URL: "GPUCLOUD_TOKEN_BASE_URL",
  /** The construct's path, for messages only. */
  PATH: "GPUCLOUD_TOKEN_PATH",
  /** The account's variable prefix; empty or absent means the default account. */
  ENV_PREFIX: "GPUCLOUD_TOKEN_ENV_PREFIX",
  /**
   * `plantimestamp()`, destroy side only: the mark of the run its hand-off carries (RunTicket.planTime;
   * a destroy-time provisioner may call it, as it refers to nothing but `self`).
   */
  PLAN_TIME: "GPUCLOUD_TOKEN_PLAN_TIME",
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
 * Folder (relative to Terraform's working directory) of the stack folder's records: the hand-offs
 * from a destroy half to the create half of the same run, the token each create half applied, and
 * the per-name create locks (runtime/records/, runtime/locks/name-lock.ts). Ids and names, no secret.
 */
export const HANDOFF_DIR = ".gpucloud-handoff";
