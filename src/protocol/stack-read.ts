import { RuntimeCommand } from "./commands";

/**
 * A key of the `stack-read` query and result, which are flat maps (the external protocol allows
 * nothing else): `<slot>.<field>`, the slot `t0`, `t1`, ... per token. Short, since Terraform copies
 * the result, kept in the state, for every output it plans (docs/performance.md).
 */
export function stackReadKey(slot: string, field: string): string {
  return `${slot}.${field}`;
}

/** A query key without a token key: "true" in the stack's reads after the writes. */
export const STACK_READ_AFTER_WRITE = "after_write";

/**
 * A query key without a token key, in a read after the writes: the slots (comma-separated) of the
 * tokens the plan-time read found no id for (creates, adoptions at apply), the only ones it reads.
 */
export const STACK_READ_NEW_SLOTS = "new_slots";

/** A query key without a token key: `terraform.workspace`, to find what this folder last applied. */
export const STACK_READ_WORKSPACE = "workspace";

/**
 * A key without a token key: the run's ticket (see RunTicket, encodeRunTicket). The plan-time read
 * makes it and returns it in its result; the reads after the writes get it in their query.
 */
export const STACK_READ_TICKET = "ticket";

/**
 * A result key without a token key: what the user must see even when the read succeeds, one line
 * each; the stack's `check` block turns it into a warning (Terraform hides a successful read's stderr).
 */
export const STACK_READ_WARNINGS = "warnings";

/**
 * A result key without a token key: the failed lookups' errors, when the read also serves tokens: it
 * succeeds then (a `-target` plan of tokens goes on), and the roster's precondition fails a full plan.
 */
export const STACK_READ_LOOKUP_ERRORS = "lookup_errors";

/**
 * One ApiToken in the stack's read: what the constructs write into the query (as
 * {@link StackReadQueryField}s) and the script reads back from it.
 */
export interface StackReadToken {
  /** The construct's address: its key in the stack's read. */
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
  /** "false" for `valueInState: false`: the `token` result field is then "". */
  VALUE_IN_STATE: "value_in_state",
  /** Only for a lookup the stack's read answers ({@link LookupKind}): the entry is then that lookup's query, and its result fields. */
  LOOKUP: "lookup",
  /** A lookup's or a token's construct path, for error messages and the ledger. */
  PATH: "path",
  /** Only for an account that pins identities (allowedIdentities): their JSON array. */
  PIN: "pin",
  /**
   * "true" in the plan-time read for a token whose name or a previous name is a Terraform expression: its
   * query then holds neither, nor its description (one value unknown at plan would defer the whole read, and
   * every other token with it), and the read knows it by its ledger entry alone; the writer finds it by name
   * at apply. The reads after the writes get its whole query.
   */
  BY_LEDGER: "by_ledger",
  /**
   * "true" in the plan-time read for a token whose description alone is an expression, which its query
   * does not hold: the ledger's digest tells its drift, and without a ledger entry it counts as not in sync.
   */
  DESCRIPTION_AT_APPLY: "desc_at_apply",
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
  /**
   * "true" when the API holds what the last apply wrote for the token (its ledger entry), or, without
   * one, when a token of that name exists and matches every managed field: the writer's drift marker.
   */
  IN_SYNC: "in_sync",
  /** A short human reason, e.g. `no API token is named "ci"` or `rename pending from "old"`. */
  REASON: "reason",
} as const;

/** A token's attributes, as the stack's read reports them (all strings). */
export interface TokenAttributes {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly token: string;
  readonly created_at: string;
  readonly last_used: string;
}
