/** Environment variables read from the Terraform process (never written into configuration). */
export const CredentialEnv = {
  BASE_URL: "GPUCLOUD_BASE_URL",
  USERNAME: "GPUCLOUD_USERNAME",
  PASSWORD: "GPUCLOUD_PASSWORD",
  PASSWORD_MD5: "GPUCLOUD_PASSWORD_MD5",
  API_TOKEN: "GPUCLOUD_API_TOKEN",
  /** Overall time budget of one script run in seconds, retries included. */
  TIMEOUT_SECONDS: "GPUCLOUD_TIMEOUT_SECONDS",
  /**
   * The terraform (or tofu) binary that runs the plan, name or path, for the plan-time read's look
   * at what the last apply managed (see LEDGER_OUTPUT); default: TERRAFORM_BINARY_NAME (cdktf's own
   * variable), else `terraform`, else `tofu`, on PATH.
   */
  TERRAFORM: "GPUCLOUD_TERRAFORM",
} as const;

/** cdktf's variable naming the terraform binary it runs; the plan-time read runs the same one. */
export const CDKTF_TERRAFORM_BINARY_ENV = "TERRAFORM_BINARY_NAME";

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
 * Prefixes an account may not use: the token writer's own inputs are `GPUCLOUD_WRITER_*`, so an
 * account prefixed so would read the writer's baseUrl as its address (GPUCLOUD_WRITER_BASE_URL).
 */
export const RESERVED_ENV_PREFIXES: readonly string[] = ["GPUCLOUD_WRITER_"];

/** The variables of the account with the prefix `envPrefix`. */
export function accountEnv(envPrefix: string): {
  readonly BASE_URL: string;
  readonly USERNAME: string;
  readonly PASSWORD: string;
  readonly PASSWORD_MD5: string;
  readonly API_TOKEN: string;
  /**
   * The account a plan may move the stack's tokens to, on purpose: the label the failing plan prints
   * (`<identity> at <API address>`). Not a secret.
   */
  readonly MOVE_TO: string;
  /**
   * Only where a plan cannot read what the last apply managed: the label of the account (as the
   * failing plan prints it) whose credentials the plan may use unchecked, on purpose. Not a secret.
   */
  readonly UNCHECKED_ACCOUNT: string;
} {
  return {
    BASE_URL: `${envPrefix}BASE_URL`,
    USERNAME: `${envPrefix}USERNAME`,
    PASSWORD: `${envPrefix}PASSWORD`,
    PASSWORD_MD5: `${envPrefix}PASSWORD_MD5`,
    API_TOKEN: `${envPrefix}API_TOKEN`,
    MOVE_TO: `${envPrefix}MOVE_TO`,
    UNCHECKED_ACCOUNT: `${envPrefix}UNCHECKED_ACCOUNT`,
  };
}

/**
 * What a GpuCloudAccount may pin (allowedIdentities): a credential identity at an API address, as
 * plans print an account: `user <name> at <url>`, or `API token sha256:<12 hex> at <url>` (a digest
 * of the token, never the token). The address belongs to it: the same user name on staging's API is
 * another deployment.
 */
const ALLOWED_IDENTITY = /^(user \S.*|API token sha256:[0-9a-f]{12}) at (https?:\/\/\S+)$/;

/** An allowedIdentities entry split into its identity and its API address (as written); undefined for text of another form. */
export function parseAllowedIdentity(text: string): { readonly identity: string; readonly api: string } | undefined {
  const match = ALLOWED_IDENTITY.exec(text);
  return match ? { identity: match[1], api: match[2] } : undefined;
}

/**
 * The names of every account's secret variables, whichever accounts a run uses: a name made of
 * a possible prefix and PASSWORD, PASSWORD_MD5 or API_TOKEN. (Hiding a value of some other tool's
 * `..._PASSWORD` as well costs nothing.)
 */
export const SECRET_ENV_NAME_PATTERN = /^[A-Z_][A-Z0-9_]*_(?:PASSWORD|PASSWORD_MD5|API_TOKEN)$/;

/** Names of secret variables, so that every output path can redact their values. */
export const SECRET_ENV_NAMES: readonly string[] = [CredentialEnv.PASSWORD, CredentialEnv.PASSWORD_MD5, CredentialEnv.API_TOKEN];
