import { foldTokenName, stackReadKey, StackReadResultField } from "../../protocol";
import { sha256Hex } from "../io/crypto";
import { tokensNamed } from "../names/name-match";
import { duplicatesWarning, pickByPreviousNames } from "../names/name-pick";
import type { TokenIndex } from "../names/token-index";
import { NO_TOKEN_ATTRIBUTES, tokenAttributes, type TokenView } from "../names/token-list";
import type { LastManaged, ManagedToken } from "./stack-query";

/*
 * What the stack's reads say of one managed token among the tokens listed from its account: which
 * token its name designates, whether it matches the configuration, its attributes, and what the
 * user must see about it even when the read succeeds.
 */

/** The tokens a managed name designates (see tokensNamed). */
type Named = ReturnType<typeof tokensNamed>;

/** What the ledger keeps of a managed description (see LedgerToken.description): a digest, "" where it is not managed. */
export function descriptionDigest(description: string | undefined): string {
  return description === undefined ? "" : sha256Hex(description).slice(0, 16);
}

/** The token a managed token's fields are taken from (none when several carry its name only folded), and why. */
function resolve(
  managed: ManagedToken,
  tokens: TokenIndex,
  named: Named,
  last: LastManaged | undefined,
  warn: (line: string) => void,
): { readonly token?: TokenView; readonly inSync: boolean; readonly reason: string; readonly taken?: TokenView } {
  const { matches, exact } = named;
  // A rename of the token the state holds comes first, as a provider updates the resource of its state:
  // another token that has the new name does not become this construct's (the writer refuses the rename).
  const renamed = lastManagedUnderItsName(managed, tokens, last);
  if (renamed) {
    return {
      token: renamed,
      inSync: false,
      reason: `rename pending from "${renamed.name}" (id ${renamed.id}), the token the last apply managed for this ApiToken`,
      taken: matches.find((t) => t.id !== renamed.id),
    };
  }
  if (!exact && matches.length > 1) {
    // The writer refuses to choose (see decideWrite); the plan shows why it will fail.
    return { inSync: false, reason: `${matches.length} API tokens have the name "${managed.name}" after trimming and case-folding` };
  }
  const token = matches[0];
  if (!token) {
    const previous = pickByPreviousNames(tokens, managed.previousNames, warn);
    // Its id and value, known at plan: the rename keeps both (the writer refuses to end on another id).
    if (previous) return { token: previous, inSync: false, reason: `rename pending from "${previous.name}" (id ${previous.id})` };
    return { inSync: false, reason: `no API token is named "${managed.name}"` };
  }
  if (managed.description !== undefined && (token.description ?? "") !== managed.description) {
    return { token, inSync: false, reason: `the description of API token "${managed.name}" differs` };
  }
  return { token, inSync: true, reason: "in sync" };
}

/**
 * Whether the API still holds what the last apply wrote for this ApiToken (its ledger entry): its token,
 * under that name and, where managed, that description. Undefined without an entry. This, not a
 * comparison with the configuration, is the writer's drift marker: a change of the configuration shows
 * in the plan as the changed key alone, and a change in the console as the marker.
 */
function asLastApplied(last: LastManaged | undefined, tokens: TokenIndex): boolean | undefined {
  if (last === undefined || last.description === undefined || last.id === "") return undefined;
  const token = tokens.byId(last.id);
  if (token === undefined) return false;
  const description = last.description === "" || descriptionDigest(token.description ?? "") === last.description;
  return foldTokenName(token.name) === foldTokenName(last.name) && description;
}

/**
 * The token the last apply managed for this ApiToken (its construct path, in the state's ledger)
 * under the name it had then, when the configured name is another: a rename of that token, as a
 * provider updates the resource its state holds, on any runner, with or without previousNames, also
 * when an apply that renamed it was interrupted or failed (the ledger keeps what the last apply that
 * finished its writes managed). Not a token renamed in the console since.
 */
function lastManagedUnderItsName(managed: ManagedToken, tokens: TokenIndex, last: LastManaged | undefined): TokenView | undefined {
  if (last === undefined || last.id === "" || foldTokenName(last.name) === foldTokenName(managed.name)) return undefined;
  const token = tokens.byId(last.id);
  return token !== undefined && foldTokenName(token.name) === foldTokenName(last.name) ? token : undefined;
}

/**
 * What a plan must show about one managed token even when everything reads fine: several tokens
 * carry its name, or its name now resolves to another token than the one this folder last applied.
 */
function warningsFor(
  managed: ManagedToken,
  tokens: TokenIndex,
  { matches, exact }: Named,
  last: { readonly id: string; readonly name: string } | undefined,
): string[] {
  const lines: string[] = [];
  if (matches.length > 1 && !exact) {
    lines.push(
      `${matches.length} API tokens have the name "${managed.name}" after trimming and case-folding, none exactly ` +
        `(ids ${matches.map((t) => t.id).join(", ")}): the apply refuses to choose one. Revoke or rename all but one in the console.`,
    );
  } else if (matches.length > 1) lines.push(duplicatesWarning(managed.name, matches));
  const now = matches[0];
  if (now && last && last.name === managed.name && now.id !== last.id) {
    const old = tokens.byId(last.id);
    const where = old ? `is now named "${old.name}"` : "no longer exists";
    lines.push(
      `API token "${managed.name}" now resolves to id ${now.id}, not to id ${last.id}, which the last apply managed ` +
        `and which ${where}: the stack's tokenId and token switch to ${now.id}.`,
    );
  }
  return lines;
}

/** What a read observed of one managed token. */
export interface Observation {
  /** Its result fields (attributes, `in_sync`, `reason`), keyed by its slot. */
  readonly fields: Record<string, string>;
  /** The id of the token its fields are taken from; "" for none. */
  readonly id: string;

  /** Whether any token has its name (exactly, or after trimming and case-folding). */
  readonly named: boolean;
}

/**
 * What a read observes of one managed token, and the lines the user must see about it (`warn`).
 * `last` is preferred among several tokens of its name.
 */
export function observeToken(
  m: ManagedToken,
  tokens: TokenIndex,
  last: LastManaged | undefined,
  warn: (line: string) => void,
  log: (line: string) => void,
): Observation {
  if (m.byLedger) return observeByLedger(m, tokens, last, warn);
  const named = tokensNamed(tokens, m.name, last?.id);
  const { token, inSync, reason, taken } = resolve(m, tokens, named, last, log);
  if (taken === undefined) for (const line of warningsFor(m, tokens, named, last)) warn(line);
  else {
    warn(
      `the apply will not rename API token ${token?.id} ("${token?.name}") to "${m.name}" for ${m.path || m.key}: API token ${taken.id} ` +
        `already has that name. Rename or revoke that token in the console, or choose another name.`,
    );
  }
  return {
    // A description only the apply knows: compared through the ledger alone; without an entry, written.
    fields: resultFields(m, token, asLastApplied(last, tokens) ?? (inSync && !m.descriptionAtApply), reason),
    id: token?.id ?? "",
    named: named.matches.length > 0,
  };
}

/** A token's result fields, keyed by its slot: the attributes of the token it designates (if any), its marker and why. */
function resultFields(m: ManagedToken, token: TokenView | undefined, inSync: boolean, reason: string): Record<string, string> {
  const fields: Record<string, string> = {
    ...(token ? tokenAttributes(token) : NO_TOKEN_ATTRIBUTES),
    // The data source's result is stored in the state and in plan files; this token's value is
    // read through its ephemeral value instead.
    ...(m.valueInState ? {} : { [StackReadResultField.TOKEN]: "" }),
    [StackReadResultField.IN_SYNC]: inSync ? "true" : "false",
    [StackReadResultField.REASON]: reason,
  };
  return Object.fromEntries(Object.entries(fields).map(([field, value]) => [stackReadKey(m.slot, field), value]));
}

/**
 * A token the plan-time read knows by its ledger entry alone (its name is an expression, see
 * ManagedToken.byLedger): the last apply's token by id, whatever its name now (the writer renames it to
 * the configured name), its drift marker from the ledger; without one, no token: the writer finds it
 * by name at apply, and the read after the writes reads it.
 */
function observeByLedger(m: ManagedToken, tokens: TokenIndex, last: LastManaged | undefined, warn: (line: string) => void): Observation {
  const token = last === undefined || last.id === "" ? undefined : tokens.byId(last.id);
  // Renamed in the console: the apply renames it back (to the ledger's name, unless the configuration changed it too).
  const taken =
    token !== undefined && last !== undefined && foldTokenName(token.name) !== foldTokenName(last.name)
      ? tokens.foldedAs(last.name).find((t) => t.id !== token.id)
      : undefined;
  if (taken !== undefined && last !== undefined) {
    warn(
      `API token ${token?.id}, which the last apply managed as "${last.name}" for ${m.path || m.key}, is now named "${token?.name}", ` +
        `and API token ${taken.id} has "${last.name}": unless its configured name changed too, the apply will not rename it back ` +
        `onto that name. Rename or revoke one of them in the console.`,
    );
  }
  const reason = token
    ? `the token the last apply managed for this ApiToken (id ${token.id}); its name is an expression, written at apply`
    : "its name is an expression: the apply finds the token by that name, or creates it";
  return { fields: resultFields(m, token, asLastApplied(last, tokens) === true, reason), id: token?.id ?? "", named: token !== undefined };
}

/**
 * A token whose name designates the token the last apply managed for another ApiToken still configured
 * (`owner`, which renames it away, its name an expression or not): not this one's. The writer creates or
 * adopts one for it at apply, once that rename is done.
 */
export function heldByAnother(m: ManagedToken, id: string, owner: string): Observation {
  const reason = `API token ${id} has this name, but the last apply managed it for the ApiToken "${owner}"`;
  return { fields: resultFields(m, undefined, false, reason), id: "", named: true };
}

/** The tokens that `wanted` resolve to in `tokens`, knowing nothing of the last apply (the read after the writes). */
export function resolvedTokens(wanted: readonly ManagedToken[], tokens: TokenIndex): TokenView[] {
  const quiet = () => undefined;
  return wanted.flatMap((m) => resolve(m, tokens, tokensNamed(tokens, m.name), undefined, quiet).token ?? []);
}
