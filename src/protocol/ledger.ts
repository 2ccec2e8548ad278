/**
 * The ledger: what a stack's last apply managed, kept in the stack's Terraform state (what every
 * pipeline keeps) as the root output {@link LEDGER_OUTPUT}, so that the next plan, on any runner,
 * knows each ApiToken's last token and account: it fails when the credentials reach another
 * account, and warns about a removed ApiToken whose token stays active. Ids, names, API addresses
 * and credential identities: nothing secret.
 *
 * Each stack read returns the ledger of the tokens it resolved ({@link STACK_READ_LEDGER}); the
 * output merges the plan-time read's and those of the reads after the writes.
 */
export const LEDGER_OUTPUT = "gpucloud_token_ledger";

/**
 * The ledger's format: a ledger of another version is not read as this one's (the plan fails
 * closed, as where the state cannot be read). Bump it with any change of the encoding.
 */
export const LEDGER_VERSION = 1;

/**
 * The logical ids of the resources through which the library writes tokens (each account's token
 * writer, the stack's token roster) start with this, so that the names a state lists tell a
 * state that holds the library's writes (see {@link tokenWriteKind}).
 */
export const TOKEN_WRITE_ID_PREFIX = "gpucloud_";

/** The stack's token roster's logical id: every full apply of a stack with ApiTokens creates it first. */
export const TOKEN_ROSTER_ID = `${TOKEN_WRITE_ID_PREFIX}token_roster`;

/**
 * What an address of `terraform state list` is of the library's token writes (see
 * TOKEN_WRITE_ID_PREFIX): the roster, a token's write, or none of them.
 */
export function tokenWriteKind(address: string): "roster" | "token" | undefined {
  const [type, id] = address.trim().split(".");
  if ((type !== "null_resource" && type !== "terraform_data") || id === undefined || !id.startsWith(TOKEN_WRITE_ID_PREFIX))
    return undefined;
  return type === "terraform_data" && id.replace(/\[\d+\]$/, "") === TOKEN_ROSTER_ID ? "roster" : "token";
}

/** A result key without a token key: the ledger of the tokens the read resolved (see encodeLedger). */
export const STACK_READ_LEDGER = "ledger";

/** An account as the ledger records it. */
export interface LedgerAccount {
  /** The account's variable prefix. */
  readonly prefix: string;
  /** The API address (normalized, without user information). */
  readonly api: string;
  /** Who the credentials logged in as: `user <name>`, or `API token sha256:<12 hex>`. */
  readonly identity: string;
}

/** An account's key in the ledger: `<prefix> <api>` (its identity is the key's value). */
export function ledgerAccountKey(account: LedgerAccount): string {
  return `${account.prefix} ${account.api}`;
}

/** Whether two ledger accounts are one: the same prefix, API address and identity. */
export function sameLedgerAccount(a: LedgerAccount, b: LedgerAccount): boolean {
  return a.prefix === b.prefix && a.api === b.api && a.identity === b.identity;
}

/** One ApiToken in the ledger, under its construct path. */
export interface LedgerToken {
  readonly name: string;
  readonly id: string;
  readonly account: LedgerAccount;
  /**
   * A digest of the description the apply wrote ("" where the construct does not manage it): the
   * next plan tells drift (a change in the console) from a change of the configuration by it.
   */
  readonly description: string;
}

/**
 * The ledger as the stack reads return it and the output keeps it:
 * `{"a":{"<prefix> <api>":"<identity>"},"t":{"<path>":["<name>","<id>","<prefix> <api>","<description digest>"]},"v":1}`,
 * keys sorted: one ledger is always one text.
 */
export function encodeLedger(tokens: ReadonlyMap<string, LedgerToken>): string {
  const accounts: Record<string, string> = {};
  const entries: Record<string, [string, string, string, string]> = {};
  for (const path of [...tokens.keys()].sort()) {
    const token = tokens.get(path)!;
    const where = ledgerAccountKey(token.account);
    accounts[where] = token.account.identity;
    entries[path] = [token.name, token.id, where, token.description];
  }
  const sorted = Object.fromEntries(Object.entries(accounts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify({ a: sorted, t: entries, v: LEDGER_VERSION });
}

/** The ledger an {@link encodeLedger} text holds; undefined for text of another form or version. */
export function decodeLedger(text: string): Map<string, LedgerToken> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { a, t, v } = (parsed ?? {}) as { a?: unknown; t?: unknown; v?: unknown };
  if (!isRecord(a) || !isRecord(t) || v !== LEDGER_VERSION) return undefined;
  const tokens = new Map<string, LedgerToken>();
  for (const [path, entry] of Object.entries(t)) {
    if (!Array.isArray(entry) || entry.length !== 4 || !entry.every((v) => typeof v === "string")) return undefined;
    const [name, id, where, description] = entry as [string, string, string, string];
    const identity = a[where];
    const space = where.indexOf(" ");
    if (typeof identity !== "string" || space <= 0) return undefined;
    tokens.set(path, { name, id, account: { prefix: where.slice(0, space), api: where.slice(space + 1), identity }, description });
  }
  return tokens;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
