/**
 * Walking the paginated token list (GET /api-tokens with limit/offset).
 *
 * The server may apply another page size than asked (a default, or a clamp of `limit`), so
 * the offset advances by the number of items received, not by the page size asked for. The
 * walk stops when the offset reaches `total` (unless the last page came back exactly as large
 * as asked, which suggests a `total` that lags behind), or on an empty page. Tokens are
 * deduplicated by id (pages may overlap when tokens are deleted meanwhile). A server that
 * never advances (pages of tokens already seen) is detected and reported instead of looping.
 */
import { GpuCloudError } from "./errors";
import type { ApiToken, TokenList } from "./schemas";

export interface ListTokensParams {
  readonly limit?: number;
  readonly offset?: number;
  /** A field to order by, e.g. `created_at` (allowed names: not in the spec). */
  readonly sortField?: string;
  readonly sortOrder?: "asc" | "desc";
}

export interface ListAllTokensOptions {
  /** Items asked for per page (default 100; the server may return fewer). */
  readonly pageSize?: number;
  /** Default `created_at`: stable under concurrent inserts together with ascending order. */
  readonly sortField?: string;
  /** Default `asc`. */
  readonly sortOrder?: "asc" | "desc";
  /** Hard bound on requests (default 10 000). */
  readonly maxPages?: number;
}

/** Anything that lists one page of tokens, e.g. a GpuCloudClient. */
export interface TokenPageSource {
  listTokens(params: ListTokensParams): Promise<TokenList>;
}

export const DEFAULT_PAGE_SIZE = 100;
/** Pages in a row without a single new token before the walk gives up. */
const MAX_STALE_PAGES = 3;

const OPERATION = "list API tokens (GET /api-tokens)";

/** Every API token, walking all pages; each token once, in the order first seen. */
export function listAllTokens(client: TokenPageSource, options: ListAllTokensOptions = {}): Promise<ApiToken[]> {
  return walkTokenPages((params) => client.listTokens(params), options);
}

/** {@link listAllTokens} over any page fetcher. */
export async function walkTokenPages(
  fetchPage: (params: ListTokensParams) => Promise<TokenList>,
  options: ListAllTokensOptions = {},
): Promise<ApiToken[]> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const maxPages = options.maxPages ?? 10_000;
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw new GpuCloudError({ operation: OPERATION, kind: "validation", detail: "pageSize must be a positive integer" });
  }
  if (!Number.isInteger(maxPages) || maxPages < 1) {
    throw new GpuCloudError({ operation: OPERATION, kind: "validation", detail: "maxPages must be a positive integer" });
  }
  const sortField = options.sortField ?? "created_at";
  const sortOrder = options.sortOrder ?? "asc";
  const seen = new Map<string, ApiToken>();
  let offset = 0;
  let stale = 0;
  for (let page = 1; ; page++) {
    if (page > maxPages) {
      throw new GpuCloudError({
        operation: OPERATION,
        kind: "protocol",
        detail: `gave up after ${maxPages} pages (offset ${offset}, ${seen.size} tokens so far)`,
      });
    }
    const { tokens, total } = await fetchPage({ limit: pageSize, offset, sortField, sortOrder });
    if (tokens.length === 0) break;
    let added = 0;
    for (const token of tokens) {
      if (!seen.has(token.id)) {
        seen.set(token.id, token);
        added++;
      }
    }
    offset += tokens.length;
    if (added === 0) {
      stale++;
      if (stale >= MAX_STALE_PAGES) {
        throw new GpuCloudError({
          operation: OPERATION,
          kind: "protocol",
          detail: `the server does not advance through the list: ${stale} pages in a row (up to offset ${offset}) held only tokens already seen`,
        });
      }
    } else {
      stale = 0;
    }
    if (offset >= total && tokens.length < pageSize) break;
  }
  return [...seen.values()];
}
