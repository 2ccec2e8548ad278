/**
 * The stack's token writer, one `null_resource` per stack and account: its `triggers` hold what
 * a reviewer reads in the plan, its one create-time `local-exec` (`token-writer`) makes every write
 * of the apply on that account in one process. Its inputs come three ways, since Linux caps one
 * environment string at 128 KiB: the literal names and descriptions in a synthesized file (an
 * asset of the stack), what only Terraform knows (the plan's ids, names and descriptions given as
 * expressions) in environment variables of at most {@link WRITER_CHUNK_TOKENS} tokens each.
 */

/** Environment of the writer's provisioner. */
export const WriterEnv = {
  /** The account's variable prefix ("" for the default account). */
  ENV_PREFIX: "GPUCLOUD_WRITER_ENV_PREFIX",
  /** The account's baseUrl, when the construct gives one; absent means the prefix's BASE_URL variable. */
  BASE_URL: "GPUCLOUD_WRITER_BASE_URL",
  /** The inputs file (see {@link WriterInputs}), relative to the stack folder. */
  INPUTS: "GPUCLOUD_WRITER_INPUTS",
  /** The plan's ticket (see RunTicket): the accounts its checks were for, and where its walks ended. */
  TICKET: "GPUCLOUD_WRITER_TICKET",
  /** `<prefix><n>`, n = 0, 1, ...: a JSON object {@link WriterPlanned} per chunk of tokens. */
  PLANNED_PREFIX: "GPUCLOUD_WRITER_PLANNED_",
} as const;

/** Tokens per {@link WriterEnv.PLANNED_PREFIX} variable: far inside 128 KiB with ids of a few hundred characters. */
export const WRITER_CHUNK_TOKENS = 200;

/** The writer's inputs file: each token the writer manages, by construct path, with its literal props. */
export interface WriterInputs {
  readonly v: 1;
  /** Construct path → [name, description]: "" for a name given as an expression, null for an unmanaged description or one given as an expression. */
  readonly tokens: Readonly<Record<string, readonly [string, string | null]>>;
}

/**
 * What the plan knows of each token, by construct path: `i`, the id the plan-time read found ("" for
 * none: a create or an adoption); `n` and `d`, the name and description, only where the construct
 * gives them as expressions (an unmanaged description is absent); `p`, the previous names of a token
 * with props the plan-time read was not given (expressions), which the writer renames from when it has no id.
 */
export type WriterPlanned = Readonly<
  Record<string, { readonly i: string; readonly n?: string; readonly d?: string; readonly p?: readonly string[] }>
>;

/** Trigger keys of the writer that are not a token's: `<path>.<field>` are (see {@link WriterTrigger}). */
export const WriterAccountTrigger = {
  ENV_PREFIX: "account.env_prefix",
  BASE_URL: "account.base_url",
} as const;

/** A token's trigger keys: `<construct path>.<field>`, so that a plan names the token and the field. */
export const WriterTrigger = {
  NAME: "name",
  /** Present only while the description is managed. */
  DESCRIPTION: "description",
  /**
   * "true" while the API matched the configuration at plan time; otherwise an expression unknown
   * during plan that becomes "true" at apply: the plan shows `~ "<path>.in_sync" = "true" -> (known after apply)`.
   */
  IN_SYNC: "in_sync",
} as const;

/** The writer's trigger key of a token's field. */
export function writerTriggerKey(path: string, field: string): string {
  return `${path}.${field}`;
}

/** The value of an `in_sync` trigger once applied. */
export const IN_SYNC = "true";

/** The logical id of the writer of the default account; another account's adds a suffix (see writerLogicalId). */
export const TOKEN_WRITER_ID = "gpucloud_token_writer";
