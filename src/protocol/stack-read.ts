import { RuntimeCommand } from "./commands";

/**
 * The `stack-read` query and result are flat maps (the external protocol allows nothing
 * else), keyed `<slot>.<field>`. The slot is short and has no dots: the construct numbers its
 * stack's tokens `t0`, `t1`, ... and gives each token's construct address (the key of its
 * hand-offs and records) as the query field {@link StackReadQueryField.KEY}; without that field
 * the slot is the key. Short slots matter: Terraform keeps the result in the state and copies the
 * root module's state for every output it plans, so every character of a key is paid per output
 * (docs/performance.md). Query fields: {@link StackReadQueryField}; result fields: {@link StackReadResultField}.
 */
export function stackReadKey(slot: string, field: string): string {
  return `${slot}.${field}`;
}

/**
 * A query key without a token key: present (value "true") only in the stack's reads after the
 * writes, where a managed token that cannot be found gets a warning (removed or renamed outside
 * Terraform) beside its empty attributes, as at plan time it gets an observation.
 */
export const STACK_READ_AFTER_WRITE = "after_write";

/**
 * A query key without a token key, in a read after the writes only: the slots (comma-separated)
 * that need the API's listing: the plan-time read found no id for them (a create, a rename through
 * a hand-off), so the constructs take their attributes from this read, and the stack refers to one
 * of their {@link LISTED_ONLY_FIELDS}. The others' fields may come from the run's walk file
 * (`token` "", `last_used` "0"), which lets this read start at the walk's mark rather than page
 * back to the oldest token the run created.
 */
export const STACK_READ_LISTED_SLOTS = "listed_slots";

/** A query key without a token key: `terraform.workspace`, to find what this folder last applied. */
export const STACK_READ_WORKSPACE = "workspace";

/**
 * A query key without a token key, in the stack's plan-time read only: `plantimestamp()`, which the
 * read puts into the run's ticket (see RunTicket.planTime).
 */
export const STACK_READ_PLAN_TIME = "plan_time";

/**
 * A key without a token key: the run's ticket (see RunTicket, encodeRunTicket). The plan-time read
 * makes it and returns it in its result; the reads after the writes get it in their query.
 */
export const STACK_READ_TICKET = "ticket";

/**
 * A query key without a token key, present ("true") only when some value of the query is an
 * expression: Terraform may then read it during the apply, after destroy halves of its own run, so
 * its ticket carries no `readAt` (see RunTicket.readAt).
 */
export const STACK_READ_MAY_RUN_AT_APPLY = "may_run_at_apply";

/**
 * A result key without a token key: what the user must see even when the read succeeds (several
 * tokens carry a managed name; the token a name resolves to changed since the last apply), one
 * line each, "" when nothing. The stack's `check` block turns it into a warning of plan and apply:
 * Terraform shows an external program's stderr only when it fails.
 */
export const STACK_READ_WARNINGS = "warnings";

/**
 * A result key without a token key: the errors of the lookups the stack's read answers, one line
 * each, present only when some failed while the read also serves tokens. The read then succeeds,
 * so that a lookup matching nothing does not stop a plan of tokens (`-target`); the stack's token
 * roster fails a full plan with them (a precondition). A read without tokens fails with them.
 */
export const STACK_READ_LOOKUP_ERRORS = "lookup_errors";

/**
 * One ApiToken in the stack's read: what the constructs write into the query (as
 * {@link StackReadQueryField}s) and the script reads back from it.
 */
export interface StackReadToken {
  /** The construct's address: the key of its hand-offs and applied records. */
  readonly key: string;
  readonly name: string;
  /** Undefined when the description is not managed. */
  readonly description?: string;
  /** The names to rename from, in order of preference. */
  readonly previousNames: readonly string[];
  /** Non-secret override of the account's BASE_URL variable. */
  readonly baseUrl?: string;
  /** The account's variable prefix; undefined for the default account. */
  readonly envPrefix?: string;
  /** False: the read never returns the token's value (its `token` field is ""). */
  readonly valueInState: boolean;
  /** The identities the account's credentials may log in as; undefined: any. */
  readonly allowedIdentities?: readonly string[];
}

export const StackReadQueryField = {
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
  /** A lookup's or a token's construct path, for error messages and the ledger. */
  PATH: "path",
  /**
   * Present only when the token's GpuCloudAccount pins identities (allowedIdentities): a JSON array
   * of the identities its credentials may log in as (see IDENTITY_PATTERN).
   */
  PIN: "pin",
} as const;

/**
 * The value of a lookup's {@link StackReadQueryField.LOOKUP} field: the command whose answer the
 * stack's read gives for it (a lookup whose query holds an expression runs that command itself).
 */
export const LookupKind = {
  FLAVORS: RuntimeCommand.FLAVORS,
  FLAVOR_PREFERENCE: RuntimeCommand.FLAVOR_PREFERENCE,
} as const;
export type LookupKindName = (typeof LookupKind)[keyof typeof LookupKind];

/** Per managed token; all strings; "" where there is no such token. */
export const StackReadResultField = {
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

/** Attributes only the API's listing gives: the run's walk file keeps neither a value nor a last use. */
export const LISTED_ONLY_FIELDS: readonly string[] = [StackReadResultField.TOKEN, StackReadResultField.LAST_USED];

/** A token's attributes, as the stack's read reports them (all strings). */
export interface TokenAttributes {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly token: string;
  readonly created_at: string;
  readonly last_used: string;
}
