import { tokensNamed } from "./name-match";
import type { TokenIndex } from "./token-index";
import type { TokenView } from "./token-list";

/** The warning for several tokens carrying one managed name (shown by the plan's check block and the provisioner). */
export function duplicatesWarning(name: string, matches: readonly TokenView[]): string {
  return (
    `${matches.length} API tokens are named "${name}" (ids ${matches.map((t) => t.id).join(", ")}); ` +
    `the stack uses ${matches[0].id}. Revoke or rename the others in the console to remove the ambiguity.`
  );
}

/**
 * The token that a name designates (see {@link tokensNamed}). The API does not promise unique
 * names; if several tokens share one, the oldest is taken (a rule every command applies, so they
 * all agree), unless one of them is `preferId`, and the ambiguity is reported.
 */
function pickByName(tokens: TokenIndex, name: string, warn?: (line: string) => void, preferId?: string): TokenView | undefined {
  const { matches } = tokensNamed(tokens, name, preferId);
  if (matches.length > 1 && warn) warn(duplicatesWarning(name, matches));
  return matches[0];
}

/**
 * The first of `previousNames` that designates a token, used when no token has the configured
 * name: that token is renamed rather than a new one created.
 */
export function pickByPreviousNames(
  tokens: TokenIndex,
  previousNames: readonly string[],
  warn?: (line: string) => void,
): TokenView | undefined {
  for (const previous of previousNames) {
    const found = pickByName(tokens, previous, warn);
    if (found) return found;
  }
  return undefined;
}
