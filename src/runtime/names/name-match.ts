import type { TokenIndex } from "./token-index";
import type { TokenView } from "./token-list";

/**
 * The tokens a name designates: those with exactly that name; when there are none, those whose
 * name is the same after trimming and case-folding (a server may store "ci " as "ci", or "CI" as
 * "ci", so a token the configuration created may come back in another spelling). Oldest first,
 * except that `preferId` (the token this folder last applied) goes first when it is among them.
 */
export function tokensNamed(
  tokens: TokenIndex,
  name: string,
  preferId?: string,
): { readonly matches: TokenView[]; readonly exact: boolean } {
  const byAge = (a: TokenView, b: TokenView): number =>
    (a.id === preferId ? 0 : 1) - (b.id === preferId ? 0 : 1) || a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const folded = tokens.foldedAs(name);
  const exact = folded.filter((t) => t.name === name);
  if (exact.length > 0) return { matches: exact.sort(byAge), exact: true };
  return { matches: [...folded].sort(byAge), exact: false };
}
