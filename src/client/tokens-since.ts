/**
 * The tokens created since a point in time, read newest first from the front of the token list
 * (`sortField=created_at&sortOrder=desc`), with the overlap checks of a full walk
 * (./pagination.ts): what a run's scripts ask for after one of them walked the whole list.
 */
import { GpuCloudError } from "./errors";
import { LIST_TOKENS } from "./operations";
import {
  DEFAULT_MAX_WALKS,
  DEFAULT_PAGE_SIZE,
  isOrdered,
  ListingPlan,
  nextOffset,
  type TokenPageSource,
  type TokensSinceMark,
  type TokensSinceOptions,
  type WalkEnvironment,
} from "./pagination";
import type { ApiToken } from "./schemas";

/**
 * Every token created at or after `mark.createdAt` (a `created_at` as the API reports it, e.g. the
 * newest of an earlier full walk), newest first, read with `sortField=created_at&sortOrder=desc`
 * from the front of the list until a page reaches a token strictly older than the mark (tokens
 * tied at any created_at never end the read): a few requests where a full walk takes total / page
 * size. Pages overlap by one as in a walk; a page that no longer holds the previous page's last
 * token means that a newer token was deleted meanwhile (the list shifted towards the front, so a
 * token may have been skipped), and the read starts again. Tokens created meanwhile shift the
 * list the other way and are read twice, never skipped.
 *
 * Undefined unless the read proves the order: a server that ignores the sort can list pages that
 * merely look sorted (old tokens sharing one created_at), and stopping on them would miss what is
 * new. So the read counts only when its first token is at or above the mark and every token of
 * `mark.ids` (known to exist at or above it) was listed before anything older; a mark token gone
 * meanwhile, or a mark without ids (an empty account), proves nothing either. Then only a full
 * walk can tell what is new.
 */
export async function walkTokensSince(
  env: WalkEnvironment,
  mark: TokensSinceMark,
  options: TokensSinceOptions = {},
): Promise<ApiToken[] | undefined> {
  const since = mark.createdAt;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const maxPages = options.maxPages ?? 10_000;
  const maxWalks = options.maxWalks ?? DEFAULT_MAX_WALKS;
  for (const [name, value] of [
    ["pageSize", pageSize],
    ["maxPages", maxPages],
    ["maxWalks", maxWalks],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) {
      throw new GpuCloudError({ operation: LIST_TOKENS, kind: "validation", detail: `${name} must be a positive integer` });
    }
  }
  if (typeof since !== "number" || !Number.isFinite(since)) {
    throw new GpuCloudError({
      operation: LIST_TOKENS,
      kind: "validation",
      detail: "mark.createdAt must be a finite number (a created_at)",
    });
  }
  if (mark.ids.length === 0) return undefined;
  const wanted = { limit: pageSize, sortField: "created_at", sortOrder: "desc" } as const;
  let reason = "";
  for (let walk = 1; walk <= maxWalks; walk++) {
    if (walk > 1) {
      env.log(`GET /api-tokens: ${reason}; reading the newest tokens again (read ${walk}/${maxWalks})`);
      if (!(await env.pauseBeforeWalk(walk))) break;
    }
    const seen = new Map<string, ApiToken>();
    let offset = 0;
    let previousLast: ApiToken | undefined;
    for (let page = 1; ; page++) {
      if (page > maxPages) {
        throw new GpuCloudError({
          operation: LIST_TOKENS,
          kind: "protocol",
          detail: `gave up after ${maxPages} pages of the newest tokens (offset ${offset})`,
        });
      }
      if (!env.plan.ordered) return undefined;
      const { tokens, total } = await env.plan.fetch(env.fetchPage, { ...wanted, offset }, env.log);
      env.plan.noticeOrder(tokens, env.plan.sendSort ? wanted.sortField : undefined, wanted.sortOrder, env.log);
      if (!env.plan.ordered || !isOrdered(tokens, "created_at", "desc")) return undefined;
      if (page === 1 && tokens.length > 0 && tokens[0]!.created_at < since) return undefined;
      if (previousLast !== undefined && !tokens.some((t) => t.id === previousLast!.id)) {
        reason = `the page at offset ${offset} no longer holds the last token of the previous page`;
        break;
      }
      for (const token of tokens) if (token.created_at >= since) seen.set(token.id, token);
      const last = tokens[tokens.length - 1];
      if (last === undefined || last.created_at < since || offset + tokens.length >= total) {
        return mark.ids.every((id) => seen.has(id)) ? [...seen.values()] : undefined;
      }
      offset = nextOffset(offset, tokens.length);
      previousLast = tokens.length >= 2 ? last : undefined;
    }
  }
  throw new GpuCloudError({
    operation: LIST_TOKENS,
    kind: "protocol",
    retryable: false,
    detail: `the newest tokens shifted while they were read (last: ${reason || "none"}); no list that may have skipped a token is used`,
  });
}

/** {@link walkTokensSince} over any page source (see {@link listAllTokens}). */
export function listTokensSince(
  source: TokenPageSource,
  mark: TokensSinceMark,
  options: TokensSinceOptions = {},
): Promise<ApiToken[] | undefined> {
  if (typeof source.listTokensSince === "function") return source.listTokensSince(mark, options);
  return walkTokensSince(
    {
      fetchPage: (params) => source.listTokens(params),
      plan: new ListingPlan(),
      log: () => undefined,
      pauseBeforeWalk: (walk) => new Promise((resolve) => setTimeout(() => resolve(true), Math.min(1000, 50 * 2 ** walk))),
    },
    mark,
    options,
  );
}
