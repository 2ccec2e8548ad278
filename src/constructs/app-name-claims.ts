import type { Construct } from "constructs";

import { DEFAULT_ENV_PREFIX, foldTokenName, type StackReadToken } from "../protocol";
import { isKnown, propError } from "./validation";

/** A literal name or previous name of an ApiToken of the app. */
interface Claim {
  /** The ApiToken's construct path. */
  readonly path: string;
  readonly what: "the name" | "a previous name";
  /** As written. */
  readonly value: string;
}

/**
 * The literal names and previous names of every ApiToken of an app (keyed by the app's root
 * construct), per account: two stacks of one app that name one token on one account would both
 * adopt it, and a rename in one would rename the other's.
 */
const appClaims = new WeakMap<object, Map<string, Claim>>();

/** The account a claim is on: its prefix and its literal base URL ("" = the prefix's BASE_URL variable). */
function accountOf(entry: StackReadToken): { readonly key: string; readonly label: string } {
  const prefix = entry.envPrefix ?? DEFAULT_ENV_PREFIX;
  const baseUrl = entry.baseUrl?.trim() ?? "";
  return {
    key: `${prefix}\n${baseUrl}`,
    label: baseUrl ? `the account ${prefix}* at ${baseUrl}` : `the account ${prefix}*`,
  };
}

/**
 * Claims an ApiToken's literal name and previous names for its app, on its account; throws, naming
 * both constructs, when another ApiToken of the app claimed one of them (compared folded, as the
 * scripts compare names), or when a previous name is the name itself.
 */
export function claimTokenNames(owner: Construct, entry: StackReadToken): void {
  const kind = "ApiToken";
  const root = owner.node.root;
  let claims = appClaims.get(root);
  if (!claims) appClaims.set(root, (claims = new Map()));
  const account = accountOf(entry);
  // By the folded name: the scripts match names after trimming and case-folding too.
  const claimKey = (value: string): string => `${account.key}\n${foldTokenName(value)}`;
  const unclaimed = (value: string, what: string): void => {
    const other = claims.get(claimKey(value));
    if (other) {
      const same = other.value === value ? "" : ` ("${other.value}" after trimming and case-folding)`;
      throw propError(
        owner,
        kind,
        `${what} "${value}" is also ${other.what}${same} of ApiToken "${other.path}": two ApiTokens of one app ` +
          `would manage the same API token (on ${account.label})`,
      );
    }
  };
  if (isKnown(entry.name)) unclaimed(entry.name, "name");
  for (const previous of entry.previousNames) {
    if (!isKnown(previous)) continue;
    if (previous === entry.name) throw propError(owner, kind, `previousNames must not contain the name itself ("${previous}")`);
    unclaimed(previous, "previous name");
  }
  const path = owner.node.path;
  if (isKnown(entry.name)) claims.set(claimKey(entry.name), { path, what: "the name", value: entry.name });
  for (const previous of entry.previousNames) {
    if (isKnown(previous)) claims.set(claimKey(previous), { path, what: "a previous name", value: previous });
  }
}
