/**
 * The API tokens of every account, in memory: their creation (an opaque id and a signed value),
 * update, listing and the test hooks' view of them. Callers validate request fields first.
 */
import type { JwtSigner } from "./crypto";
import { randomHex } from "./crypto";
import { HttpError } from "./http";
import type { AddTokenInput, AddTokensInput, EmulatorTokenRecord } from "./types";
import { checkDescription, checkName } from "./validation";

export const SORT_FIELDS = ["id", "name", "created_at", "last_used"] as const;
export type SortField = (typeof SORT_FIELDS)[number];
/** The most tokens one call adds. */
const MAX_ADDED = 100_000;

export interface StoredToken {
  /** "" for the shared account. */
  account: string;
  id: string;
  name: string;
  description: string;
  token: string;
  created_at: number;
  last_used: number;
}

/** A token as the test hooks return it: a copy, its account named only when it is not the shared one. */
function tokenRecord(t: StoredToken): EmulatorTokenRecord {
  const { account, ...rest } = t;
  return account === "" ? { ...rest } : { account, ...rest };
}

/** The token as create and update return it (no last_used). */
export const writeView = (t: StoredToken) => ({
  name: t.name,
  id: t.id,
  description: t.description,
  token: t.token,
  created_at: t.created_at,
});

export class TokenStore {
  private readonly store = new Map<string, StoredToken>();

  /** API tokens are signed by the signer that checks the bearer, so a token of another instance is invalid. */
  constructor(
    private readonly signer: JwtSigner,
    private readonly nowSeconds: () => number,
  ) {}

  get(id: string): StoredToken | undefined {
    return this.store.get(id);
  }

  records(): EmulatorTokenRecord[] {
    return [...this.store.values()].map(tokenRecord);
  }

  delete(id: string): boolean {
    return this.store.delete(id);
  }

  add(input: AddTokenInput): EmulatorTokenRecord {
    try {
      return this.addChecked(input as unknown as Record<string, unknown>);
    } catch (e) {
      if (e instanceof HttpError) throw new Error(`cannot add token: ${e.message}`);
      throw e;
    }
  }

  addMany(input: AddTokensInput): EmulatorTokenRecord[] {
    try {
      return this.addManyChecked(input as unknown as Record<string, unknown>);
    } catch (e) {
      if (e instanceof HttpError) throw new Error(`cannot add tokens: ${e.message}`);
      throw e;
    }
  }

  /** A pre-existing token from untrusted input (`{name, description?, createdAt?}`), validated like the API does. */
  addChecked(input: Record<string, unknown>): EmulatorTokenRecord {
    const [record] = this.addManyChecked({ ...input, count: undefined });
    return record!;
  }

  /**
   * `count` pre-existing tokens (default 1) from untrusted input, all with one `createdAt`, as a
   * migration or a clock of whole seconds leaves them; named `name-1` … `name-<count>` when
   * `count` is given. Validated whole before any is added.
   */
  addManyChecked(input: Record<string, unknown>): EmulatorTokenRecord[] {
    if (typeof input !== "object" || input === null) throw new HttpError(400, "token input must be an object");
    const count = input.count;
    if (count !== undefined && (!Number.isSafeInteger(count) || (count as number) < 1 || (count as number) > MAX_ADDED)) {
      throw new HttpError(400, `count must be an integer from 1 to ${MAX_ADDED}`);
    }
    const names =
      count === undefined
        ? [checkName(input.name)]
        : Array.from({ length: count as number }, (_, i) => checkName(`${String(input.name)}-${i + 1}`));
    const description = checkDescription(input.description) ?? "";
    const createdAt = input.createdAt ?? this.nowSeconds();
    const account = input.account ?? "";
    if (typeof account !== "string") throw new HttpError(400, "account must be a string");
    if (typeof createdAt !== "number" || !Number.isSafeInteger(createdAt) || createdAt < 0) {
      throw new HttpError(400, "createdAt must be an integer >= 0 (Unix seconds)");
    }
    return names.map((name) => tokenRecord(this.create(account, name, description, createdAt)));
  }

  create(account: string, name: string, description: string, createdAt: number): StoredToken {
    let id: string;
    do id = `tok_${randomHex(8)}`;
    while (this.store.has(id));
    const token = this.signer.sign({ typ: "api", tid: id, iat: createdAt, jti: randomHex(16) });
    const stored: StoredToken = { account, id, name, description, token, created_at: createdAt, last_used: 0 };
    this.store.set(id, stored);
    return stored;
  }

  /** Renames the account's token `id` (and sets its description when given); another account's token is a 404 too. */
  update(id: string, account: string, name: string, description: string | undefined): StoredToken {
    const found = this.store.get(id);
    const stored = found?.account === account ? found : undefined;
    if (!stored) throw new HttpError(404, `API token ${JSON.stringify(id.slice(0, 80))} not found`);
    stored.name = name;
    if (description !== undefined) stored.description = description;
    return stored;
  }

  /**
   * One page of the account's tokens sorted by `field` (ties by id, in the same direction), or in
   * the order they were stored (oldest first, as a server that ignores the sort might list them)
   * when `sort` is undefined; and how many it has.
   */
  list(account: string, sort: { readonly field: SortField; readonly sign: 1 | -1 } | undefined, offset: number, limit: number) {
    const cmp = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);
    const all = [...this.store.values()].filter((t) => t.account === account);
    if (sort) all.sort((a, b) => sort.sign * (cmp(a[sort.field], b[sort.field]) || cmp(a.id, b.id)));
    const page = all.slice(offset, offset + limit).map((t) => ({ ...writeView(t), last_used: t.last_used }));
    return { page, total: all.length };
  }

  /** Takes a just-created token out of the list until {@link commit} (a backend still working on it). */
  withhold(token: StoredToken): void {
    this.store.delete(token.id);
  }

  /** Makes a withheld token visible, created now. */
  commit(token: StoredToken): void {
    token.created_at = Math.max(token.created_at, this.nowSeconds());
    this.store.set(token.id, token);
  }

  /** Deletes the oldest token (smallest created_at, then id); returns its id. */
  deleteOldest(): string | undefined {
    let oldest: StoredToken | undefined;
    for (const t of this.store.values()) {
      if (!oldest || t.created_at < oldest.created_at || (t.created_at === oldest.created_at && t.id < oldest.id)) oldest = t;
    }
    if (oldest) this.store.delete(oldest.id);
    return oldest?.id;
  }
}
