import { GpuCloudError, listAllTokens } from "../../src/client";
import type { ApiToken, ListTokensParams, TokenList } from "../../src/client";

function tokens(n: number, prefix = "t"): ApiToken[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${String(i).padStart(4, "0")}`,
    name: `name-${i}`,
    description: "",
    token: `value-${i}`,
    created_at: 1000 + i,
  }));
}

/** A page source over `all`, with knobs for misbehaviour. */
function source(all: ApiToken[], opts: { clamp?: number; total?: (real: number) => number; ignoreOffset?: boolean } = {}) {
  const calls: ListTokensParams[] = [];
  return {
    calls,
    async listTokens(params: ListTokensParams): Promise<TokenList> {
      calls.push(params);
      const limit = Math.min(params.limit ?? 10, opts.clamp ?? Infinity);
      const offset = opts.ignoreOffset ? 0 : (params.offset ?? 0);
      return { tokens: all.slice(offset, offset + limit), total: opts.total ? opts.total(all.length) : all.length };
    },
  };
}

describe("listAllTokens", () => {
  it("overlaps consecutive pages by one token and stops when a page reaches the total", async () => {
    const s = source(tokens(250));
    const all = await listAllTokens(s);
    expect(all.map((t) => t.id)).toEqual(tokens(250).map((t) => t.id));
    expect(s.calls).toEqual([
      { limit: 100, offset: 0, sortField: "created_at", sortOrder: "asc" },
      { limit: 100, offset: 99, sortField: "created_at", sortOrder: "asc" },
      { limit: 100, offset: 198, sortField: "created_at", sortOrder: "asc" },
    ]);
  });

  it("advances by the number of items received when the server clamps the limit", async () => {
    const s = source(tokens(53), { clamp: 7 });
    const all = await listAllTokens(s, { pageSize: 50, sortField: "name", sortOrder: "desc" });
    expect(all.map((t) => t.id)).toEqual(tokens(53).map((t) => t.id));
    expect(s.calls.map((c) => c.offset)).toEqual([0, 6, 12, 18, 24, 30, 36, 42, 48]);
    expect(s.calls[0]).toMatchObject({ sortField: "name", sortOrder: "desc" });
  });

  it("makes no extra (empty) request when the count is a multiple of the page size", async () => {
    for (const [count, offsets] of [[0, [0]], [10, [0]], [20, [0, 9, 18]], [100, [0, 9, 18, 27, 36, 45, 54, 63, 72, 81, 90]]] as const) {
      const s = source(tokens(count));
      expect(await listAllTokens(s, { pageSize: 10 })).toHaveLength(count);
      expect(s.calls.map((c) => c.offset)).toEqual(offsets);
    }
  });

  it("walks again when a token before the offset is deleted during the walk, and misses no live token", async () => {
    const all = tokens(30);
    let call = 0;
    const shifting = {
      calls: [] as ListTokensParams[],
      async listTokens(p: ListTokensParams): Promise<TokenList> {
        shifting.calls.push(p);
        if (++call === 2) all.splice(0, 1); // deleted in the console between page 1 and page 2
        const offset = p.offset ?? 0;
        return { tokens: all.slice(offset, offset + (p.limit ?? 10)), total: all.length };
      },
    };
    const result = await listAllTokens(shifting, { pageSize: 10 });
    expect(result.map((t) => t.id)).toEqual(all.map((t) => t.id));
    expect(result).toHaveLength(29);
    // walk 1: 0, then 9 (total changed) → walk 2 from 0
    expect(shifting.calls.map((c) => c.offset)).toEqual([0, 9, 0, 9, 18, 27]);
  });

  it("follows a total that grows while the pages come in ascending creation order (tokens created during the walk land at the end)", async () => {
    const all = tokens(25);
    let call = 0;
    const growing = {
      calls: [] as ListTokensParams[],
      async listTokens(p: ListTokensParams): Promise<TokenList> {
        growing.calls.push(p);
        if (++call === 2) all.push({ ...tokens(1, "new")[0]!, created_at: 5000 }); // another process's create
        const offset = p.offset ?? 0;
        return { tokens: all.slice(offset, offset + (p.limit ?? 10)), total: all.length };
      },
    };
    const result = await listAllTokens(growing, { pageSize: 10 });
    expect(result.map((t) => t.id)).toEqual(all.map((t) => t.id));
    expect(growing.calls.map((c) => c.offset)).toEqual([0, 9, 18]); // one walk, no re-walk
  });

  it("walks again when a total grows but the pages are not in ascending creation order", async () => {
    const all = tokens(25).reverse();
    let call = 0;
    const growing = {
      calls: [] as ListTokensParams[],
      async listTokens(p: ListTokensParams): Promise<TokenList> {
        growing.calls.push(p);
        if (++call === 2) all.push({ ...tokens(1, "new")[0]!, created_at: 5000 });
        const offset = p.offset ?? 0;
        return { tokens: all.slice(offset, offset + (p.limit ?? 10)), total: all.length };
      },
    };
    const result = await listAllTokens(growing, { pageSize: 10 });
    expect(result).toHaveLength(26);
    expect(growing.calls.map((c) => c.offset)).toEqual([0, 9, 0, 9, 18]);
  });

  it("walks again when the list shifts with a stable total (one deleted, one added)", async () => {
    const all = tokens(20);
    let call = 0;
    const source2 = {
      async listTokens(p: ListTokensParams): Promise<TokenList> {
        if (++call === 2) {
          all.splice(3, 1);
          all.push({ ...tokens(1, "new")[0]!, created_at: 5000 });
        }
        const offset = p.offset ?? 0;
        return { tokens: all.slice(offset, offset + (p.limit ?? 10)), total: all.length };
      },
    };
    const result = await listAllTokens(source2, { pageSize: 10 });
    expect(result.map((t) => t.id).sort()).toEqual(all.map((t) => t.id).sort());
    expect(call).toBeGreaterThan(3);
  });

  it("never returns a list when the total claims more than the pages hold", async () => {
    const s = source(tokens(15), { total: () => 1000 });
    const e = await listAllTokens(s, { pageSize: 10, maxWalks: 2 }).catch((x: unknown) => x as GpuCloudError);
    expect(e).toBeInstanceOf(GpuCloudError);
    expect((e as GpuCloudError).message).toMatch(
      /^list API tokens \(GET \/api-tokens\): the token list changed while it was read, 2 times \(last: an empty page at offset 15 although the total is 1000\)/,
    );
    expect(s.calls.map((c) => c.offset)).toEqual([0, 9, 14, 15, 0, 9, 14, 15]);
  });

  it("never returns a list when the total claims fewer than the pages hold", async () => {
    const s = source(tokens(35), { total: () => 5 });
    await expect(listAllTokens(s, { pageSize: 10, maxWalks: 2 })).rejects.toThrow(/the pages held 10 distinct tokens, the total says 5/);
  });

  it("detects a server that ignores the offset instead of looping", async () => {
    const s = source(tokens(30), { ignoreOffset: true });
    const e = await listAllTokens(s, { pageSize: 10, maxWalks: 3 }).catch((x: unknown) => x as GpuCloudError);
    expect((e as GpuCloudError).kind).toBe("protocol");
    expect((e as GpuCloudError).message).toMatch(/does not start with the last token of the previous page/);
    expect(s.calls).toHaveLength(6);
  });

  it("walks pages of a single token without overlap, relying on the total", async () => {
    const s = source(tokens(4), { clamp: 1 });
    expect(await listAllTokens(s, { pageSize: 10 })).toHaveLength(4);
    expect(s.calls.map((c) => c.offset)).toEqual([0, 1, 2, 3]);
  });

  it("drops sortField/sortOrder, then limit, when the server refuses them", async () => {
    const all = tokens(12);
    const calls: ListTokensParams[] = [];
    const picky = {
      async listTokens(p: ListTokensParams): Promise<TokenList> {
        calls.push(p);
        if (p.sortField !== undefined || p.limit !== undefined) {
          throw new GpuCloudError({ operation: "list API tokens (GET /api-tokens)", kind: "validation", httpStatus: 400, detail: "bad parameter" });
        }
        const offset = p.offset ?? 0;
        return { tokens: all.slice(offset, offset + 5), total: all.length };
      },
    };
    expect(await listAllTokens(picky, { pageSize: 10 })).toHaveLength(12);
    expect(calls.slice(0, 3)).toEqual([
      { offset: 0, limit: 10, sortField: "created_at", sortOrder: "asc" },
      { offset: 0, limit: 10 },
      { offset: 0 },
    ]);
    expect(calls.slice(3)).toEqual([{ offset: 4 }, { offset: 8 }]);
  });

  it("has a hard page bound", async () => {
    let n = 0;
    const endless = {
      async listTokens(): Promise<TokenList> {
        n++;
        return { tokens: tokens(1, `p${n}-`), total: Number.MAX_SAFE_INTEGER };
      },
    };
    await expect(listAllTokens(endless, { pageSize: 1, maxPages: 20 })).rejects.toThrow(/gave up after 20 pages/);
  });

  it("validates its options", async () => {
    await expect(listAllTokens(source([]), { pageSize: 0 })).rejects.toThrow(/pageSize/);
    await expect(listAllTokens(source([]), { maxWalks: 0 })).rejects.toThrow(/maxWalks/);
    expect(await listAllTokens(source([]))).toEqual([]);
  });
});
