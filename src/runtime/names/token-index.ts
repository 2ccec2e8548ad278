import { foldTokenName } from "../../protocol";
import type { TokenView } from "./token-list";

/**
 * An account's tokens by id and by folded name (see foldTokenName), so that finding one managed
 * token costs the same on an account of 10,000 tokens as on one of 10: reads and the writer look
 * up every managed token once or more. Kept up to date as the writer reads and writes.
 */
export class TokenIndex {
  private readonly byIdMap = new Map<string, TokenView>();
  private readonly byFold = new Map<string, TokenView[]>();

  constructor(tokens: readonly TokenView[] = []) {
    for (const t of tokens) this.put(t);
  }

  /** Every token, in no particular order. */
  all(): TokenView[] {
    return [...this.byIdMap.values()];
  }

  byId(id: string): TokenView | undefined {
    return this.byIdMap.get(id);
  }

  /** The tokens whose name is `name` after trimming and case-folding. */
  foldedAs(name: string): readonly TokenView[] {
    return this.byFold.get(foldTokenName(name)) ?? [];
  }

  /** Adds a token, or replaces the one with its id (a rename moves it to its new name). */
  put(token: TokenView): void {
    const old = this.byIdMap.get(token.id);
    if (old !== undefined) {
      const list = this.byFold.get(foldTokenName(old.name));
      if (list !== undefined) list.splice(list.indexOf(old), 1);
    }
    this.byIdMap.set(token.id, token);
    const fold = foldTokenName(token.name);
    const list = this.byFold.get(fold);
    if (list === undefined) this.byFold.set(fold, [token]);
    else list.push(token);
  }
}
