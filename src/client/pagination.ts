/**
 * Walking the paginated token list (GET /api-tokens with limit/offset) so that no live token
 * can be skipped and no walk can loop.
 *
 * - Consecutive pages overlap by one item: the next offset is `offset + received - 1`, and the
 *   next page must start with the previous page's last token. A deletion or insertion before
 *   the offset shifts the list and breaks that check.
 * - `total` must stay the same for the whole walk, and at the end the walk must hold exactly
 *   `total` distinct tokens.
 * - On any of these failures the walk starts again (bounded, with backoff, within the
 *   deadline); a list that may have skipped a token is never returned. A token missing from a
 *   list would be created a second time.
 * - The walk stops as soon as a page reaches `total`: no extra empty request.
 * - After the first page (which gives `total` and the server's page size) the other pages are
 *   fetched concurrently, at most 8 at once, and checked in offset order as they arrive: a walk
 *   waits for about total / page size / 8 round trips instead of total / page size.
 * - The spec does not show the allowed `sortField` names or limits. If the server refuses the
 *   list with `sortField`/`sortOrder` (HTTP 400 or `status: false`), they are dropped, and then
 *   `limit`; each fallback is said once in the log and kept for the rest of the client's life.
 *   A server that ignores them is fine: the walk advances by what it receives, whatever the
 *   order, as long as the order is stable.
 * - Pages of a single item cannot overlap; such a walk relies on `total` alone.
 */
import { GpuCloudError } from "./errors";
import { LIST_TOKENS, type ListTokensParams } from "./operations";

export type { ListTokensParams };
import type { ApiToken, TokenList } from "./schemas";

export interface ListAllTokensOptions {
  /** Items asked for per page (default 100; the server may return fewer or more). */
  readonly pageSize?: number;
  /** Default `created_at`: ascending creation order keeps earlier pages still while tokens are added. */
  readonly sortField?: string;
  /** Default `asc`. */
  readonly sortOrder?: "asc" | "desc";
  /** Hard bound on requests of one walk (default 10 000). */
  readonly maxPages?: number;
  /** Walks before giving up on a list that keeps changing (default 6). */
  readonly maxWalks?: number;
  /**
   * Pages requested at once after the first (default 8): the first page gives the total and
   * the server's page size, and the rest are fetched side by side. 1 walks one page at a time.
   */
  readonly concurrency?: number;
}

/** Where a newest-first read (./tokens-since.ts) starts, and what proves that the server lists newest first. */
export interface TokensSinceMark {
  /** A `created_at` as the API reports it, e.g. the newest of an earlier full walk: tokens at or after it are read. */
  readonly createdAt: number;
  /**
   * Ids of tokens known to exist with a `created_at` at or after `createdAt` (e.g. those at the
   * newest of that walk): the read counts only when the server lists each of them before any
   * older token. Without any, nothing proves the order and the read is undefined.
   */
  readonly ids: readonly string[];
}

/** Options of the newest-first read (./tokens-since.ts). */
export interface TokensSinceOptions {
  /** Items asked for per page (default 100). */
  readonly pageSize?: number;
  /** Hard bound on requests of one read (default 10 000). */
  readonly maxPages?: number;
  /** Reads before giving up on a list that keeps shifting (default 6). */
  readonly maxWalks?: number;
}

/** Anything that lists one page of tokens, e.g. a GpuCloudClient. */
export interface TokenPageSource {
  listTokens(params: ListTokensParams): Promise<TokenList>;
  /** A source that walks on its own (GpuCloudClient: with its deadline, retries and log) is asked to. */
  listAllTokens?(options?: ListAllTokensOptions): Promise<ApiToken[]>;
  /** Likewise for listTokensSince (./tokens-since.ts). */
  listTokensSince?(mark: TokensSinceMark, options?: TokensSinceOptions): Promise<ApiToken[] | undefined>;
}

export const DEFAULT_PAGE_SIZE = 100;
export const DEFAULT_MAX_WALKS = 6;
/** Pages in flight at once during a walk, after its first page. */
export const DEFAULT_WALK_CONCURRENCY = 8;

/**
 * What the server was found to accept, kept across walks of one client, so that a fallback is
 * found and logged once.
 */
export class ListingPlan {
  sendSort = true;
  sendLimit = true;
  private saidUnsorted = false;

  /** Fetches a page with what the server accepts; drops sort, then limit, when it refuses them. */
  async fetch(
    fetchPage: (params: ListTokensParams) => Promise<TokenList>,
    wanted: ListTokensParams,
    log: (line: string) => void,
  ): Promise<TokenList> {
    for (;;) {
      const params: ListTokensParams = {
        offset: wanted.offset,
        ...(this.sendLimit ? { limit: wanted.limit } : {}),
        ...(this.sendSort ? { sortField: wanted.sortField, sortOrder: wanted.sortOrder } : {}),
      };
      try {
        return await fetchPage(params);
      } catch (e) {
        const refused = e instanceof GpuCloudError && e.kind === "validation" && e.httpStatus !== undefined;
        const said = refused
          ? `${e.httpStatus !== undefined && e.httpStatus >= 300 ? `HTTP ${e.httpStatus}` : "status false"}${e.serverMessage ? `: ${e.serverMessage}` : ""}`
          : "";
        if (refused && this.sendSort && (wanted.sortField !== undefined || wanted.sortOrder !== undefined)) {
          this.sendSort = false;
          log(`GET /api-tokens: the server refused sortField/sortOrder (${said}); listing in the server's own order from now on`);
          continue;
        }
        if (refused && this.sendLimit && wanted.limit !== undefined) {
          this.sendLimit = false;
          log(`GET /api-tokens: the server refused limit=${wanted.limit} (${said}); using its default page size from now on`);
          continue;
        }
        throw e;
      }
    }
  }

  /** Says once when pages do not come back in the order asked for (harmless: the overlap check does not rely on it). */
  noticeOrder(
    tokens: readonly ApiToken[],
    sortField: string | undefined,
    sortOrder: "asc" | "desc" | undefined,
    log: (line: string) => void,
  ): void {
    if (this.saidUnsorted || !this.sendSort || sortField === undefined || isOrdered(tokens, sortField, sortOrder ?? "asc")) return;
    this.saidUnsorted = true;
    log(`GET /api-tokens: the server does not return tokens ordered by ${sortField} ${sortOrder ?? "asc"}; relying on overlapping pages`);
  }

  /** True while the server is known to honour the order asked for (sort sent, not seen ignored). */
  get ordered(): boolean {
    return this.sendSort && !this.saidUnsorted;
  }
}

export function isOrdered(tokens: readonly ApiToken[], field: string, order: "asc" | "desc"): boolean {
  const sign = order === "asc" ? 1 : -1;
  for (let i = 1; i < tokens.length; i++) {
    const a = (tokens[i - 1] as Record<string, unknown>)[field];
    const b = (tokens[i] as Record<string, unknown>)[field];
    if (typeof a !== typeof b || (typeof a !== "number" && typeof a !== "string")) return true; // nothing to judge by
    if (sign * ((a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0) > 0) return false;
  }
  return true;
}

/** What a walk needs from its client. */
export interface WalkEnvironment {
  /** One page, retried on its own within the deadline. */
  readonly fetchPage: (params: ListTokensParams) => Promise<TokenList>;
  readonly plan: ListingPlan;
  readonly log: (line: string) => void;
  /** Waits before walk number `walk` (2, 3, …); false when the deadline leaves no room for it. */
  readonly pauseBeforeWalk: (walk: number) => Promise<boolean>;
}

/** Every API token, walking all pages; each token once, in the order of the list. */
export function listAllTokens(source: TokenPageSource, options: ListAllTokensOptions = {}): Promise<ApiToken[]> {
  if (typeof source.listAllTokens === "function") return source.listAllTokens(options);
  return walkAllTokens(
    {
      fetchPage: (params) => source.listTokens(params),
      plan: new ListingPlan(),
      log: () => undefined,
      pauseBeforeWalk: (walk) => new Promise((resolve) => setTimeout(() => resolve(true), Math.min(1000, 50 * 2 ** walk))),
    },
    options,
  );
}

/** {@link listAllTokens} over a walk environment: walks until one walk is consistent. */
export async function walkAllTokens(env: WalkEnvironment, options: ListAllTokensOptions = {}): Promise<ApiToken[]> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const maxPages = options.maxPages ?? 10_000;
  const maxWalks = options.maxWalks ?? DEFAULT_MAX_WALKS;
  const concurrency = options.concurrency ?? DEFAULT_WALK_CONCURRENCY;
  for (const [name, value] of [
    ["pageSize", pageSize],
    ["maxPages", maxPages],
    ["maxWalks", maxWalks],
    ["concurrency", concurrency],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) {
      throw new GpuCloudError({ operation: LIST_TOKENS, kind: "validation", detail: `${name} must be a positive integer` });
    }
  }
  const wanted = { limit: pageSize, sortField: options.sortField ?? "created_at", sortOrder: options.sortOrder ?? "asc" } as const;
  const reasons: string[] = [];
  for (let walk = 1; walk <= maxWalks; walk++) {
    if (walk > 1) {
      env.log(`GET /api-tokens: ${reasons[reasons.length - 1]}; reading the list again (walk ${walk}/${maxWalks})`);
      if (!(await env.pauseBeforeWalk(walk))) break;
    }
    const result = await walkOnce(env, wanted, maxPages, concurrency);
    if (Array.isArray(result)) return result;
    reasons.push(result.changed);
  }
  throw new GpuCloudError({
    operation: LIST_TOKENS,
    kind: "protocol",
    retryable: false,
    detail:
      `the token list changed while it was read, ${reasons.length} time${reasons.length === 1 ? "" : "s"} ` +
      `(last: ${reasons[reasons.length - 1] ?? "none"}); no list that may have skipped a token is used`,
  });
}

/** The offset of the page after one at `offset` that held `length` tokens: one back, for the overlap. */
export function nextOffset(offset: number, length: number): number {
  return length >= 2 ? offset + length - 1 : offset + length;
}

/**
 * One walk. The first page gives `total` and the server's page size; the pages after it are
 * fetched concurrently (at most `concurrency` in flight), planned at that size, and checked in
 * offset order as they arrive, with the same checks as one page after another: each page starts
 * with the previous page's last token, the total holds (or grows while every page is in
 * ascending creation order), the distinct tokens match it. Whichever page was fetched first,
 * a token deleted or added before an offset breaks the overlap of the pages on either side of
 * that offset. A page shorter than planned (not the last) makes the walk plan again from it.
 */
async function walkOnce(
  env: WalkEnvironment,
  wanted: { readonly limit: number; readonly sortField: string; readonly sortOrder: "asc" | "desc" },
  maxPages: number,
  concurrency: number,
): Promise<ApiToken[] | { changed: string }> {
  const seen = new Map<string, ApiToken>();
  let requests = 0;
  const tooMany = (offset: number) =>
    new GpuCloudError({
      operation: LIST_TOKENS,
      kind: "protocol",
      detail: `gave up after ${maxPages} pages (offset ${offset}, ${seen.size} tokens so far)`,
    });
  const fetchAt = (offset: number): Promise<TokenList> => {
    requests++;
    return env.plan.fetch(env.fetchPage, { ...wanted, offset }, env.log);
  };
  const first = await fetchAt(0);
  // While every page came in ascending creation order, as asked, a token created during the walk
  // lands after what was read, so a total that grows is followed rather than walked again (an
  // apply's own parallel creates would otherwise force re-walks). A shift is still caught by the
  // overlap; pages of a single token, which cannot overlap, still need a stable total.
  let ascending = env.plan.ordered && wanted.sortField === "created_at" && wanted.sortOrder === "asc";
  let total = first.total;
  const firstTotal = first.total;
  const pageLength = first.tokens.length;
  /** The last page checked: where the walk stands. */
  let cursor = { offset: 0, length: 0 };
  let previousLast: ApiToken | undefined;

  /** Checks the page at `offset`, the next one in order; a reason when the list changed. */
  const check = (offset: number, page: TokenList): string | undefined => {
    const { tokens, total: pageTotal } = page;
    env.plan.noticeOrder(tokens, env.plan.sendSort ? wanted.sortField : undefined, wanted.sortOrder, env.log);
    if (previousLast !== undefined && tokens[0]?.id !== previousLast.id) {
      return `the page at offset ${offset} does not start with the last token of the previous page`;
    }
    ascending &&= env.plan.ordered && isOrdered(tokens, "created_at", "asc");
    if (pageTotal !== firstTotal) {
      // Pages arrive in any order, so a later page may report an earlier (smaller) total than its
      // predecessor; every total from the first one upwards is a moment of a growing list.
      if (!(pageTotal > firstTotal && ascending && offset > 0 && previousLast !== undefined)) {
        return `the total changed from ${firstTotal} to ${pageTotal}`;
      }
      total = Math.max(total, pageTotal);
    }
    for (const token of tokens) seen.set(token.id, token);
    const end = offset + tokens.length;
    if (end < total && tokens.length === 0) return `an empty page at offset ${offset} although the total is ${total}`;
    cursor = { offset, length: tokens.length };
    previousLast = tokens.length >= 2 ? tokens[tokens.length - 1] : undefined;
    return undefined;
  };

  const changed = check(0, first);
  if (changed !== undefined) return { changed };
  if (cursor.offset + cursor.length < total) {
    const outcome = await new Promise<string | undefined>((resolve, reject) => {
      let generation = 0;
      let done = false;
      let inFlight = 0;
      // Planned pages of this generation: offset → index; their pages once arrived, by index.
      let planned: number[] = [];
      let arrived: Array<TokenList | undefined> = [];
      let checked = 0;
      const finish = (error: unknown, reason?: string) => {
        if (done) return;
        done = true;
        if (error !== undefined) reject(error);
        else resolve(reason);
      };
      const plannedEnd = () => {
        const last = planned.length > 0 ? { offset: planned[planned.length - 1]!, length: pageLength } : cursor;
        return last.offset + last.length;
      };
      const launch = () => {
        while (!done && inFlight < concurrency && plannedEnd() < total) {
          const previous = planned.length > 0 ? { offset: planned[planned.length - 1]!, length: pageLength } : cursor;
          const offset = nextOffset(previous.offset, previous.length);
          if (requests >= maxPages) {
            // The pages in flight may still show a change; only once they are checked is this final.
            if (inFlight === 0) finish(tooMany(offset));
            return;
          }
          const index = planned.length;
          planned.push(offset);
          const mine = generation;
          inFlight++;
          fetchAt(offset).then(
            (page) => {
              inFlight--;
              if (done || mine !== generation) return launch();
              arrived[index] = page;
              advance();
            },
            (err: unknown) => {
              inFlight--;
              finish(err);
            },
          );
        }
        if (!done && inFlight === 0 && checked === planned.length) finish(undefined);
      };
      /** Checks the pages that arrived in order; plans again after a page shorter than planned. */
      const advance = () => {
        while (!done && checked < planned.length && arrived[checked] !== undefined) {
          const offset = planned[checked]!;
          const page = arrived[checked]!;
          checked++;
          const reason = check(offset, page);
          if (reason !== undefined) return finish(undefined, reason);
          if (page.tokens.length !== pageLength && offset + page.tokens.length < total) {
            // Planned for pages of `pageLength`: the pages after this one start elsewhere.
            generation++;
            planned = [];
            arrived = [];
            checked = 0;
            break;
          }
        }
        if (!done && checked === planned.length && cursor.offset + cursor.length >= total) {
          // Everything up to the total is checked; later pages in flight (planned for a total
          // that was larger) are not needed.
          generation++;
          return finish(undefined);
        }
        launch();
      };
      launch();
    });
    if (outcome !== undefined) return { changed: outcome };
  }
  if (seen.size !== total) return { changed: `the pages held ${seen.size} distinct tokens, the total says ${total}` };
  return [...seen.values()];
}
