import type { ApiClient } from "../../client/client";
import { listAllTokens, type TokensSinceMark } from "../../client/pagination";
import type { TokenAttributes } from "../../protocol";
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

/** A walk of the account's whole token list; every value learnt is hidden from the log from then on. */
export async function walkAllTokens(client: ApiClient, ctx: RuntimeContext): Promise<TokenView[]> {
  const tokens: TokenView[] = await listAllTokens(client);
  ctx.out.addSecrets(tokens.map((t) => t.token));
  return tokens;
}

/** Newest-first page size: what appeared since a mark usually fits in one request. */
const NEWEST_PAGE = 50;

/**
 * The tokens created at or after `mark.createdAt`, newest first (the client's listTokensSince);
 * undefined unless the read proves that order by listing `mark.ids` first. Every value learnt is
 * hidden from the log from then on.
 */
export async function listNewestSince(client: ApiClient, ctx: RuntimeContext, mark: TokensSinceMark): Promise<TokenView[] | undefined> {
  const found = await client.listTokensSince(mark, { pageSize: NEWEST_PAGE });
  if (found !== undefined) ctx.out.addSecrets(found.map((t) => t.token));
  return found;
}
