import { foldTokenName } from "../../protocol";
import { tokensNamed } from "../names/name-match";
import type { TokenIndex } from "../names/token-index";
import type { TokenView } from "../names/token-list";

/** One token the writer manages, as the plan and the configuration give it. */
export interface WantedToken {
  /** The construct path: the key of its triggers, its ledger entry and its messages. */
  readonly path: string;
  readonly name: string;
  /** Undefined when the construct does not manage the description: the token keeps its own. */
  readonly description?: string;
  /**
   * The id the plan-time read found for it ("" for none): its consumers were planned with this
   * id, and a rename (previousNames, or the ledger's token under its old name) is an update of it.
   */
  readonly plannedId: string;
  /**
   * Only for a token with props the plan-time read was not given (expressions, see GivenProps): without
   * a planned id and a token of its name, the first of these that names a token is renamed.
   */
  readonly previousNames?: readonly string[];
}

/** What the writer does for one token, decided from the tokens listed right before. */
export type WriteDecision =
  /** The API holds it as configured. `adopted`: found by name, the plan had no id for it. */
  | { readonly kind: "none"; readonly token: TokenView; readonly adopted: boolean }
  /** An update of `token` (a rename, a description), with the outcome line's words. */
  | { readonly kind: "update"; readonly token: TokenView; readonly adopted: boolean; readonly changes: readonly string[] }
  /** No token has its name: created in a wave, after a fresh read (see LatestTokens.refresh). */
  | { readonly kind: "create" }
  /**
   * Only another construct's token (`token`, claimed) has its name: decided again in a wave, once the
   * updates (that token's rename away) are done; still so there, refused, never created beside it.
   */
  | { readonly kind: "held"; readonly token: TokenView }
  /** Nothing is written for it, and the apply fails naming why and what to do. */
  | { readonly kind: "refuse"; readonly reason: string };

/**
 * The decision for one token among `tokens` (the account's tokens as listed right before): the
 * plan's token by id when the plan found one, else the token its name designates (the oldest, or
 * the exact spelling before one equal only after trimming and case-folding), else the token of its
 * first previous name that has one (previousNames), else a create.
 */
export function decideWrite(wanted: WantedToken, tokens: TokenIndex, claimed: ReadonlySet<string> = new Set()): WriteDecision {
  if (wanted.plannedId !== "") {
    const planned = tokens.byId(wanted.plannedId);
    if (planned === undefined) {
      return {
        kind: "refuse",
        reason:
          `the plan showed API token id ${wanted.plannedId} for "${wanted.name}", the id its consumers were planned with, but ` +
          `the API no longer lists it (revoked since the plan, or on another account); nothing was written for it: run terraform plan again`,
      };
    }
    const taken = foldTokenName(planned.name) === foldTokenName(wanted.name) ? undefined : tokensNamed(tokens, wanted.name).matches[0];
    if (taken !== undefined) {
      return {
        kind: "refuse",
        reason:
          `cannot rename API token ${planned.id} ("${planned.name}") to "${wanted.name}": API token ${taken.id} already has that name. ` +
          `Rename or revoke that token in the console, or choose another name, then apply again`,
      };
    }
    return outcome(wanted, planned, false);
  }
  // A token the plan gave to another construct is never adopted by name for this one.
  const named = tokensNamed(tokens, wanted.name);
  const exact = named.exact;
  const matches = named.matches.filter((t) => !claimed.has(t.id));
  if (!exact && matches.length > 1) {
    return {
      kind: "refuse",
      reason:
        `${matches.length} API tokens have the name "${wanted.name}" after trimming and case-folding, none exactly ` +
        `(ids ${matches.map((t) => t.id).join(", ")}); revoke or rename all but one in the console`,
    };
  }
  if (matches.length > 0) return outcome(wanted, matches[0], true);
  if (named.matches.length > 0) return { kind: "held", token: named.matches[0] };
  for (const previous of wanted.previousNames ?? []) {
    const renamed = tokensNamed(tokens, previous).matches.find((t) => !claimed.has(t.id));
    if (renamed !== undefined) return outcome(wanted, renamed, true);
  }
  return { kind: "create" };
}

function outcome(wanted: WantedToken, token: TokenView, adopted: boolean): WriteDecision {
  const changes = changesTo(wanted, token);
  return changes.length === 0 ? { kind: "none", token, adopted } : { kind: "update", token, adopted, changes };
}

/** What an update of `token` changes, as the outcome line lists it; empty when it is as configured. */
function changesTo(wanted: WantedToken, token: TokenView): string[] {
  const changes: string[] = [];
  // Another spelling of the same name (a server that trims or lower-cases) is the name, not a rename.
  if (token.name !== wanted.name && foldTokenName(token.name) !== foldTokenName(wanted.name)) {
    changes.push(`renamed "${token.name}" to "${wanted.name}"`);
  }
  if (wanted.description !== undefined && (token.description ?? "") !== wanted.description) changes.push("updated the description");
  return changes;
}
