import { GpuCloudError } from "../../client/errors";
import { LOGIN_OPERATION } from "../../client/operations";
import {
  type LedgerAccount,
  STACK_READ_AFTER_WRITE,
  STACK_READ_NEW_SLOTS,
  STACK_READ_TICKET,
  STACK_READ_WORKSPACE,
  StackReadQueryField,
  type StackReadToken,
} from "../../protocol";
import { ConfigError, envPrefixOf } from "../../shared/config";
import { errorMessage } from "../../shared/error-message";
import { requireName } from "../names/name-input";
import { lookupLabel, parseLookup, type StackLookup } from "./stack-lookups";

/** One managed token as the stack's query describes it, with where it sits in the query. */
export interface ManagedToken extends StackReadToken {
  /** Where its fields are in the query and the result (see stackReadKey). */
  readonly slot: string;
  /** The construct's path, for messages ("" when the query does not give it). */
  readonly path: string;
  /**
   * Known by its ledger entry alone (StackReadQueryField.BY_LEDGER): its name or previous names are
   * expressions the plan-time read is not given (name "", no description, no previous names).
   */
  readonly byLedger: boolean;
  /** Its description is an expression the plan-time read is not given (StackReadQueryField.DESCRIPTION_AT_APPLY). */
  readonly descriptionAtApply: boolean;
}

/** What the last apply managed for one ApiToken: its token, and the account it managed it on when known. */
export interface LastManaged {
  readonly id: string;
  readonly name: string;
  readonly account?: LedgerAccount;
  /** The ledger's digest of the description it wrote (see LedgerToken.description). */
  readonly description?: string;
}

/** The stack's query split into its managed tokens and its lookups. */
export interface StackQuery {
  readonly tokens: ManagedToken[];
  readonly lookups: StackLookup[];
}

/** Query keys of the read itself rather than of a token or lookup. */
const READ_KEYS: ReadonlySet<string> = new Set([STACK_READ_AFTER_WRITE, STACK_READ_WORKSPACE, STACK_READ_TICKET, STACK_READ_NEW_SLOTS]);

/** Splits the flat query (`<key>.<field>`) into one entry per managed token or lookup. */
export function parseStackQuery(query: Record<string, string>): StackQuery {
  const fields = new Map<string, Map<string, string>>();
  for (const [flatKey, value] of Object.entries(query)) {
    if (READ_KEYS.has(flatKey)) continue;
    const dot = flatKey.indexOf(".");
    if (dot <= 0) throw new ConfigError(`query key "${flatKey}" is not of the form <token key>.<field>`);
    const slot = flatKey.slice(0, dot);
    let entry = fields.get(slot);
    if (!entry) fields.set(slot, (entry = new Map()));
    entry.set(flatKey.slice(dot + 1), value);
  }
  const parsed: StackQuery = { tokens: [], lookups: [] };
  for (const [slot, entry] of fields) {
    if (entry.has(StackReadQueryField.LOOKUP)) parsed.lookups.push(parseLookup(slot, entry));
    else parsed.tokens.push(parseToken(slot, entry));
  }
  return parsed;
}

function parseToken(slot: string, entry: ReadonlyMap<string, string>): ManagedToken {
  const previous = [...entry]
    .filter(([field]) => field.startsWith(StackReadQueryField.PREVIOUS_PREFIX))
    .map(([field, value]) => [Number(field.slice(StackReadQueryField.PREVIOUS_PREFIX.length)), value] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([index, value]) => requireName(value, `query.${slot}.previous.${index}`));
  const baseUrl = entry.get(StackReadQueryField.BASE_URL);
  const envPrefix = entry.get(StackReadQueryField.ENV_PREFIX);
  const byLedger = entry.get(StackReadQueryField.BY_LEDGER) === "true";
  return {
    slot,
    key: entry.get(StackReadQueryField.KEY) || slot,
    name: byLedger ? "" : requireName(entry.get(StackReadQueryField.NAME), `query.${slot}.name`),
    byLedger,
    descriptionAtApply: entry.get(StackReadQueryField.DESCRIPTION_AT_APPLY) === "true",
    description: entry.get(StackReadQueryField.DESCRIPTION),
    previousNames: previous,
    baseUrl: baseUrl ? baseUrl : undefined,
    envPrefix: envPrefix ? envPrefixOf(envPrefix) : undefined,
    path: entry.get(StackReadQueryField.PATH) ?? "",
    valueInState: entry.get(StackReadQueryField.VALUE_IN_STATE) !== "false",
    allowedIdentities: pinOf(entry.get(StackReadQueryField.PIN), slot),
  };
}

/** The identities a pin allows (a JSON array of strings), undefined without a pin. */
function pinOf(text: string | undefined, slot: string): string[] | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every((i) => typeof i === "string")) {
    throw new ConfigError(`query.${slot}.${StackReadQueryField.PIN} must be a JSON array of identities (set by the GpuCloudAccount)`);
  }
  return parsed as string[];
}

export function isLookup(entry: ManagedToken | StackLookup): entry is StackLookup {
  return "kind" in entry;
}

/** A construct as error messages name it. */
function readerLabel(entry: ManagedToken | StackLookup): string {
  return isLookup(entry) ? lookupLabel(entry) : `ApiToken "${entry.path || entry.key}"`;
}

/**
 * An error of the stack's read, naming the constructs it concerns: the read is one data source
 * for all of them, so Terraform's own message names none.
 */
export class ReadError extends Error {
  constructor(
    err: unknown,
    readonly readers: ReadonlyArray<ManagedToken | StackLookup>,
  ) {
    super(`${errorMessage(err)} (read for ${readers.map(readerLabel).join(", ")})`);
  }
}

/**
 * Whether an error is the account's rather than one operation's: its configuration, its login, its
 * credentials, or the connection (the client logs in on the first request, which may be the token
 * walk's). A list or catalog call that fails or runs out of time after the login is that call's.
 */
export function isAccountError(err: unknown): boolean {
  if (err instanceof ConfigError) return true;
  if (!(err instanceof GpuCloudError)) return false;
  return err.operation === LOGIN_OPERATION || err.kind === "auth" || err.kind === "network";
}
