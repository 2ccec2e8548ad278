import { foldTokenName } from "../../protocol";
import { tokensNamed } from "../names/name-match";
import { duplicatesWarning, pickByName, pickByPreviousNames } from "../names/name-pick";
import type { TokenView } from "../names/token-list";
import type { AppliedRecord } from "../records/applied-record";
import type { Handoff } from "../records/handoff";

/*
 * Which token a create half applies, among the account's tokens as listed right before its write.
 */

/** What a create half wants, as the choice of its token needs it. */
export interface Wanted {
  readonly name: string;
  readonly previousNames: readonly string[];
  /** The account the token is on (see accountDigestOf). */
  readonly api: string;
  /** The id the plan showed ("" for a create): among several tokens of the name, the one chosen. */
  readonly plannedId: string;
  readonly warn: (line: string) => void;
}

/** The token an apply ends on, and how it was found: its outcome line says so. */
export interface Target {
  readonly token: TokenView;
  readonly foundBy: "handoff" | "name" | "pending record" | "previous name" | "plan";
}

/**
 * The token to apply: the one handed over in this run, else one that has the name (adoption), else
 * one an unfinished apply from this folder wrote for this name, else one with a previous name (an
 * explicit rename), else the one the plan showed (the last apply's for this ApiToken: a rename);
 * undefined when a new one is to be created. Fails, before any write, where
 * choosing would be a guess or a rename would take a name another token has.
 */
export function findTarget(
  wanted: Wanted,
  tokens: readonly TokenView[],
  handoff: Handoff | undefined,
  lastApplied: AppliedRecord | undefined,
): Target | undefined {
  const handedOver = handedOverToken(tokens, handoff);
  const named = tokenOfThisName(wanted, tokens, lastApplied, handedOver);
  refuseRenameOntoAnother(wanted.name, handedOver, named);
  if (handedOver) return { token: handedOver, foundBy: "handoff" };
  if (named) return { token: named, foundBy: "name" };
  const recorded = pendingRecordedToken(wanted, tokens, lastApplied);
  if (recorded) return { token: recorded, foundBy: "pending record" };
  const previous = pickByPreviousNames(tokens, wanted.previousNames, wanted.warn);
  if (previous) return { token: previous, foundBy: "previous name" };
  // No token has the name: the one the plan showed for this ApiToken (the last apply's, from the state's ledger) is renamed.
  const planned = wanted.plannedId ? tokens.find((t) => t.id === wanted.plannedId) : undefined;
  return planned ? { token: planned, foundBy: "plan" } : undefined;
}

/**
 * The token the replaced resource handed over. By the id this folder last applied under the old
 * name, when the hand-off has one: a token gone since is never replaced by another of the old name
 * (another deployment's, perhaps); one renamed outside Terraform since is looked for by the old name.
 */
function handedOverToken(tokens: readonly TokenView[], handoff: Handoff | undefined): TokenView | undefined {
  if (handoff === undefined) return undefined;
  if (handoff.id === undefined) return pickByName(tokens, handoff.name);
  const byId = tokens.find((t) => t.id === handoff.id);
  if (byId === undefined || foldTokenName(byId.name) === foldTokenName(handoff.name)) return byId;
  return pickByName(tokens, handoff.name);
}

/**
 * The token that already has the configured name: among several, the handed-over one, else the
 * first (see tokensNamed), and the duplicates are warned about.
 */
function tokenOfThisName(
  wanted: Wanted,
  tokens: readonly TokenView[],
  lastApplied: AppliedRecord | undefined,
  handedOver: TokenView | undefined,
): TokenView | undefined {
  const { name } = wanted;
  // Exact matches, else matches after trimming and case-folding: never create when one exists. Among several,
  // the one the plan showed (it read what the last apply managed), else the one this folder recorded.
  const { matches, exact } = tokensNamed(tokens, name, wanted.plannedId || lastApplied?.id);
  if (!exact && matches.length > 1 && !(handedOver && matches.some((t) => t.id === handedOver.id))) {
    throw new Error(
      `no API token is named exactly "${name}", but ${matches.length} have that name after trimming and case-folding ` +
        `(${matches.map((t) => `${JSON.stringify(t.name)} id ${t.id}`).join(", ")}), and a server may store names that way: ` +
        `not creating another, and not choosing one. Revoke or rename all but one in the console. Nothing was changed.`,
    );
  }
  if (matches.length > 1) wanted.warn(duplicatesWarning(name, matches));
  return matches.length > 1 && handedOver ? (matches.find((t) => t.id === handedOver.id) ?? matches[0]) : matches[0];
}

/** A rename of the handed-over token onto a name another token already has would leave two of that name. */
function refuseRenameOntoAnother(name: string, handedOver: TokenView | undefined, named: TokenView | undefined): void {
  if (!handedOver || !named || named.id === handedOver.id) return;
  throw new Error(
    `cannot rename API token "${handedOver.name}" (id ${handedOver.id}) to "${name}": ` +
      `API token ${named.id} already has that name. Choose another name, or rename that token in the console. ` +
      `Nothing was changed.`,
  );
}

/** A token an unfinished apply from this folder wrote for this very name on this API. */
function pendingRecordedToken(wanted: Wanted, tokens: readonly TokenView[], lastApplied: AppliedRecord | undefined): TokenView | undefined {
  if (!lastApplied?.pending || lastApplied.name !== wanted.name || lastApplied.api !== wanted.api) return undefined;
  return tokens.find((t) => t.id === lastApplied.id);
}

/**
 * The token this folder applied last under another name, when it still has that name: if this
 * apply ends on another token, that one stays active.
 */
export function oldTokenLeftBehind(
  wanted: Wanted,
  tokens: readonly TokenView[],
  lastApplied: AppliedRecord | undefined,
): TokenView | undefined {
  if (!lastApplied || lastApplied.name === wanted.name) return undefined;
  // Still under its old name (as the API spells it: a server may have trimmed or lower-cased it).
  return tokens.find((t) => t.id === lastApplied.id && foldTokenName(t.name) === foldTokenName(lastApplied.name));
}
