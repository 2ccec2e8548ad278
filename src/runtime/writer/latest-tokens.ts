import type { ApiClient } from "../../client/client";
import type { TokensSinceMark } from "../../client/pagination";
import type { RuntimeContext } from "../../shared/context";
import { TokenIndex } from "../names/token-index";
import { listNewestSince, type TokenView, walkAllTokens } from "../names/token-list";

/** The newest created_at among `tokens`, and the ids at it: where a newest-first read starts (see TokensSinceMark). */
export function markOf(tokens: readonly TokenView[]): TokensSinceMark | undefined {
  if (tokens.length === 0) return undefined;
  const newest = tokens.reduce((m, t) => Math.max(m, t.created_at), -Infinity);
  return { createdAt: newest, ids: tokens.filter((t) => t.created_at === newest).map((t) => t.id) };
}

/**
 * An account's tokens as the writer knows them: one walk of the whole list, then before each wave of
 * creates a newest-first read of what appeared since the read before (one request while a wave
 * creates fewer than a page), with the writer's own writes laid over them. A rename by someone else
 * after the walk is not seen (a rename keeps its token's creation time); a create is.
 */
export class LatestTokens {
  private index = new TokenIndex();
  /** Where the next read starts: the newest token of the read before the last one (see refresh). */
  private mark: TokensSinceMark | undefined;
  /** The newest token of the last read: the mark after the next read. */
  private lastReadMark: TokensSinceMark | undefined;

  private constructor(
    private readonly ctx: RuntimeContext,
    private readonly client: ApiClient,
  ) {}

  /** A walk of the whole list. */
  static async walk(ctx: RuntimeContext, client: ApiClient): Promise<LatestTokens> {
    const latest = new LatestTokens(ctx, client);
    latest.take(await walkAllTokens(client, ctx), true);
    return latest;
  }

  /** The tokens as last read, with this writer's writes laid over them. */
  get tokens(): TokenIndex {
    return this.index;
  }

  /**
   * What appeared since the last read, newest first; a walk of the whole list where the server does not
   * prove that it sorts (or the account was empty). The mark trails by one read: each read asks
   * for what is newer than the newest token of the read before the last, so that a token another
   * party created just before this writer's last wave, but that the API listed only later, is read
   * (two waves of creates still fit in one page).
   */
  async refresh(): Promise<void> {
    const read = this.mark === undefined ? undefined : await listNewestSince(this.client, this.ctx, this.mark);
    if (read === undefined) this.take(await walkAllTokens(this.client, this.ctx), true);
    else this.take(read, false);
  }

  /** A token this writer created or updated, as the API returned it. */
  record(token: TokenView): void {
    this.index.put(token);
  }

  private take(read: readonly TokenView[], whole: boolean): void {
    if (whole) this.index = new TokenIndex();
    for (const t of read) this.index.put(t);
    const newest = markOf(read);
    if (whole) this.mark = this.lastReadMark = newest;
    else {
      this.mark = this.lastReadMark ?? this.mark;
      this.lastReadMark = newest ?? this.lastReadMark;
    }
  }
}
