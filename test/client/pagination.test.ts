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
  it("walks every page with the default page size and order", async () => {
    const s = source(tokens(250));
    const all = await listAllTokens(s);
    expect(all).toHaveLength(250);
    expect(s.calls).toEqual([
      { limit: 100, offset: 0, sortField: "created_at", sortOrder: "asc" },
      { limit: 100, offset: 100, sortField: "created_at", sortOrder: "asc" },
      { limit: 100, offset: 200, sortField: "created_at", sortOrder: "asc" },
    ]);
  });

  it("advances by the number of items received when the server clamps the limit", async () => {
    const s = source(tokens(53), { clamp: 7 });
    const all = await listAllTokens(s, { pageSize: 50, sortField: "name", sortOrder: "desc" });
    expect(all.map((t) => t.id)).toEqual(tokens(53).map((t) => t.id));
    expect(s.calls.map((c) => c.offset)).toEqual([0, 7, 14, 21, 28, 35, 42, 49]);
    expect(s.calls[0]).toMatchObject({ sortField: "name", sortOrder: "desc" });
  });

  it("stops on an empty page when total claims more", async () => {
    const s = source(tokens(15), { total: () => 1000 });
    expect(await listAllTokens(s, { pageSize: 10 })).toHaveLength(15);
    expect(s.calls.map((c) => c.offset)).toEqual([0, 10, 15]);
  });

  it("keeps going while pages come back full even if total claims fewer", async () => {
    const s = source(tokens(35), { total: () => 5 });
    expect(await listAllTokens(s, { pageSize: 10 })).toHaveLength(35);
    expect(s.calls.map((c) => c.offset)).toEqual([0, 10, 20, 30]);
  });

  it("needs one extra request only when total is an exact multiple of full pages", async () => {
    const s = source(tokens(20));
    expect(await listAllTokens(s, { pageSize: 10 })).toHaveLength(20);
    expect(s.calls.map((c) => c.offset)).toEqual([0, 10, 20]);
  });

  it("dedupes tokens by id across overlapping pages", async () => {
    const all = tokens(12);
    let call = 0;
    const overlapping = {
      async listTokens(p: ListTokensParams): Promise<TokenList> {
        call++;
        // the second page starts two items early (as after deletions)
        const offset = call === 2 ? (p.offset ?? 0) - 2 : (p.offset ?? 0);
        return { tokens: all.slice(offset, offset + (p.limit ?? 10)), total: all.length };
      },
    };
    const result = await listAllTokens(overlapping, { pageSize: 5 });
    expect(new Set(result.map((t) => t.id)).size).toBe(result.length);
    expect(result.length).toBeGreaterThanOrEqual(10);
  });

  it("detects a server that never advances", async () => {
    const s = source(tokens(30), { ignoreOffset: true });
    const e = await listAllTokens(s, { pageSize: 10 }).catch((x: unknown) => x as GpuCloudError);
    expect(e).toBeInstanceOf(GpuCloudError);
    expect((e as GpuCloudError).kind).toBe("protocol");
    expect((e as GpuCloudError).message).toMatch(/^list API tokens \(GET \/api-tokens\): the server does not advance/);
    expect(s.calls.length).toBeLessThanOrEqual(4);
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
    expect(await listAllTokens(source([]))).toEqual([]);
  });
});
