import type { ApiClient } from "../../client/client";
import { listAllTokens } from "../../client/pagination";
import type { TokenAttributes } from "../../protocol";
import { foldTokenName, MAX_TOKEN_NAME_LENGTH } from "../../protocol";
import { ConfigError } from "../../shared/config";
import type { RuntimeContext } from "../../shared/context";

/** The fields of an API token this script relies on. */
export interface TokenView {
  readonly id: string;
  readonly name: string;
  readonly description?: string | null;
  readonly token: string;
  readonly created_at: number;
  readonly last_used?: number;
}

/**
 * A token as Terraform reads it: every attribute a string (the external data source's result
 * is a map of strings), `""` for no description and `"0"` for never used. The same fields are the
 * stack read's per-token result fields.
 */
export function tokenAttributes(token: TokenView): TokenAttributes {
  return {
    id: token.id,
    name: token.name,
    description: token.description ?? "",
    token: token.token,
    created_at: String(token.created_at),
    last_used: String(token.last_used ?? 0),
  };
}

/** The attributes of a token that is not there. */
export const NO_TOKEN_ATTRIBUTES: TokenAttributes = { id: "", name: "", description: "", token: "", created_at: "", last_used: "" };

/**
 * The tokens a name designates: those with exactly that name; when there are none, those whose
 * name is the same after trimming and case-folding (a server may store "ci " as "ci", or "CI" as
 * "ci", so a token the configuration created may come back in another spelling). Oldest first,
 * except that `preferId` (the token this folder last applied) goes first when it is among them.
 */
export function tokensNamed(
  tokens: readonly TokenView[],
  name: string,
  preferId?: string,
): { readonly matches: TokenView[]; readonly exact: boolean } {
  const byAge = (a: TokenView, b: TokenView): number =>
    (a.id === preferId ? 0 : 1) - (b.id === preferId ? 0 : 1) || a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const exact = tokens.filter((t) => t.name === name);
  if (exact.length > 0) return { matches: exact.sort(byAge), exact: true };
  const folded = foldTokenName(name);
  return { matches: tokens.filter((t) => foldTokenName(t.name) === folded).sort(byAge), exact: false };
}

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
export function pickByName(
  tokens: readonly TokenView[],
  name: string,
  warn?: (line: string) => void,
  preferId?: string,
): TokenView | undefined {
  const { matches } = tokensNamed(tokens, name, preferId);
  if (matches.length > 1 && warn) warn(duplicatesWarning(name, matches));
  return matches[0];
}

/**
 * The first of `previousNames` that designates a token, used when no token has the configured
 * name: that token is renamed rather than a new one created.
 */
export function pickByPreviousNames(
  tokens: readonly TokenView[],
  previousNames: readonly string[],
  warn?: (line: string) => void,
): TokenView | undefined {
  for (const previous of previousNames) {
    const found = pickByName(tokens, previous, warn);
    if (found) return found;
  }
  return undefined;
}

/**
 * Entries grouped by the client they need (account prefix and base URL as configured), in order
 * of first appearance: one login and one list walk per group, whatever the number of tokens.
 */
export function groupByAccount<T extends { readonly envPrefix?: string; readonly baseUrl?: string }>(entries: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const entry of entries) {
    const account = `${entry.envPrefix ?? ""}\n${entry.baseUrl ?? ""}`;
    const group = groups.get(account);
    if (group) group.push(entry);
    else groups.set(account, [entry]);
  }
  return [...groups.values()];
}

/** One walk of the token list; every value learnt is hidden from the log from then on. */
export async function allTokens(client: ApiClient, ctx: RuntimeContext): Promise<TokenView[]> {
  const tokens: TokenView[] = await listAllTokens(client);
  ctx.out.addSecrets(tokens.map((t) => t.token));
  return tokens;
}

/** A name as the API accepts it: not blank, at most {@link MAX_TOKEN_NAME_LENGTH} characters (the client's own limit). */
export function requireName(value: string | undefined, field: string): string {
  if (value === undefined || value.trim().length === 0) {
    throw new ConfigError(`${field} is required and must not be blank (the API token's name)`);
  }
  const length = [...value].length;
  if (length > MAX_TOKEN_NAME_LENGTH) {
    throw new ConfigError(`${field}: an API token's name is at most ${MAX_TOKEN_NAME_LENGTH} characters, got ${length}`);
  }
  return value;
}

/** Previous names from the provisioner's environment (a JSON array of strings). */
export function parsePreviousNames(value: string | undefined, field: string): string[] {
  if (value === undefined || value.trim() === "") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new ConfigError(`${field} must be a JSON array of names`);
  }
  if (!Array.isArray(parsed) || !parsed.every((n) => typeof n === "string")) {
    throw new ConfigError(`${field} must be a JSON array of names`);
  }
  return parsed.map((n, i) => requireName(n as string, `${field}[${i}]`));
}
