import type { ApiToken, ListTokensParams, TokenList } from "../../src/client";
import { GpuCloudError, listAllTokens, listTokensSince } from "../../src/client";

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
    for (const [count, offsets] of [
      [0, [0]],
      [10, [0]],
      [20, [0, 9, 18]],
      [100, [0, 9, 18, 27, 36, 45, 54, 63, 72, 81, 90]],
    ] as const) {
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
    const result = await listAllTokens(shifting, { pageSize: 10, concurrency: 1 });
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
    const result = await listAllTokens(growing, { pageSize: 10, concurrency: 1 });
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
    const e = await listAllTokens(s, { pageSize: 10, maxWalks: 2, concurrency: 1 }).catch((x: unknown) => x as GpuCloudError);
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
    const e = await listAllTokens(s, { pageSize: 10, maxWalks: 3, concurrency: 1 }).catch((x: unknown) => x as GpuCloudError);
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
          throw new GpuCloudError({
            operation: "list API tokens (GET /api-tokens)",
            kind: "validation",
            httpStatus: 400,
            detail: "bad parameter",
          });
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

describe("listAllTokens in parallel", () => {
  /** A source whose answers come back after `delay(call)` ms, counting the calls in flight. */
  function delayed(all: ApiToken[], delay: (offset: number, call: number) => number, before?: (call: number) => void) {
    const calls: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    return {
      calls,
      get maxInFlight() {
        return maxInFlight;
      },
      async listTokens(p: ListTokensParams): Promise<TokenList> {
        const call = calls.push(p.offset ?? 0);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, delay(p.offset ?? 0, call)));
        before?.(call);
        inFlight--;
        const offset = p.offset ?? 0;
        return { tokens: all.slice(offset, offset + (p.limit ?? 10)), total: all.length };
      },
    };
  }

  it("fetches the pages after the first at most 8 at once, each once, and returns them in list order", async () => {
    const all = tokens(1020);
    // Later pages answer first: the checks run in offset order whatever the order of arrival.
    const s = delayed(all, (offset) => (offset === 0 ? 0 : Math.max(1, 30 - offset / 40)));
    const result = await listAllTokens(s, { pageSize: 50 });
    expect(result.map((t) => t.id)).toEqual(all.map((t) => t.id));
    // The same requests as one page after another: offsets 0, 49, 98, ... (21 pages of 50 overlapping by one).
    expect([...s.calls].sort((a, b) => a - b)).toEqual(Array.from({ length: 21 }, (_, i) => i * 49));
    expect(s.maxInFlight).toBe(8);
  });

  it("walks one page at a time with concurrency 1", async () => {
    const s = delayed(tokens(300), () => 1);
    expect(await listAllTokens(s, { pageSize: 50, concurrency: 1 })).toHaveLength(300);
    expect(s.maxInFlight).toBe(1);
  });

  it("walks again when a token is deleted while pages are in flight, and returns the live list", async () => {
    const all = tokens(400);
    // The 5th request's answer is computed after the oldest token was deleted; pages before and
    // after it (arriving in any order) no longer overlap.
    const s = delayed(
      all,
      (offset) => 1 + ((offset * 7) % 13),
      (call) => {
        if (call === 5) all.splice(0, 1);
      },
    );
    const result = await listAllTokens(s, { pageSize: 50 });
    expect(result.map((t) => t.id)).toEqual(all.map((t) => t.id));
    expect(result).toHaveLength(399);
    expect(s.calls.filter((o) => o === 0)).toHaveLength(2); // a second walk
  });

  it("walks again when a token is deleted and another added with a stable total, while pages are in flight", async () => {
    const all = tokens(300);
    const s = delayed(
      all,
      (offset) => 1 + ((offset * 5) % 11),
      (call) => {
        if (call === 4) {
          all.splice(120, 1);
          all.push({ ...tokens(1, "new")[0]!, created_at: 9000 });
        }
      },
    );
    const result = await listAllTokens(s, { pageSize: 50 });
    expect(result.map((t) => t.id).sort()).toEqual(all.map((t) => t.id).sort());
    expect(s.calls.filter((o) => o === 0).length).toBeGreaterThanOrEqual(2);
  });

  it("follows tokens created at the end while pages are in flight (ascending creation order), without a second walk", async () => {
    const all = tokens(300);
    const s = delayed(
      all,
      (offset) => 1 + ((offset * 3) % 7),
      (call) => {
        if (call === 3 || call === 6) all.push({ ...tokens(1, `new${call}-`)[0]!, created_at: 9000 + call });
      },
    );
    const result = await listAllTokens(s, { pageSize: 50 });
    expect(result.map((t) => t.id)).toEqual(all.map((t) => t.id));
    expect(result).toHaveLength(302);
    expect(s.calls.filter((o) => o === 0)).toHaveLength(1);
  });

  it("plans again from a page shorter than the first, and misses nothing", async () => {
    const all = tokens(200);
    const calls: number[] = [];
    const uneven = {
      async listTokens(p: ListTokensParams): Promise<TokenList> {
        const offset = p.offset ?? 0;
        calls.push(offset);
        // A server whose pages are not all of one size: the page at offset 49 holds 20 tokens.
        const size = offset === 49 ? 20 : (p.limit ?? 10);
        return { tokens: all.slice(offset, offset + size), total: all.length };
      },
    };
    const result = await listAllTokens(uneven, { pageSize: 50 });
    expect(result.map((t) => t.id)).toEqual(all.map((t) => t.id));
    expect(calls).toContain(68); // the page after the short one: 49 + 20 - 1
  });

  it("fails with the first failing page's error", async () => {
    const all = tokens(500);
    const failing = {
      async listTokens(p: ListTokensParams): Promise<TokenList> {
        const offset = p.offset ?? 0;
        if (offset === 196) {
          throw new GpuCloudError({
            operation: "list API tokens (GET /api-tokens)",
            kind: "auth",
            httpStatus: 401,
            detail: "the access token was rejected (HTTP 401)",
          });
        }
        return { tokens: all.slice(offset, offset + (p.limit ?? 10)), total: all.length };
      },
    };
    await expect(listAllTokens(failing, { pageSize: 50 })).rejects.toThrow(/the access token was rejected/);
  });

  it("validates concurrency", async () => {
    await expect(listAllTokens(source([]), { concurrency: 0 })).rejects.toThrow(/concurrency must be a positive integer/);
  });
});

describe("listTokensSince: the newest tokens, from the front of the list sorted by created_at desc", () => {
  /** A source over `all` (ascending creation order) that sorts as asked; `ignoreSort` answers in ascending order whatever is asked. */
  function sorting(all: ApiToken[], opts: { ignoreSort?: boolean; before?: (call: number) => void } = {}) {
    const calls: ListTokensParams[] = [];
    return {
      calls,
      async listTokens(p: ListTokensParams): Promise<TokenList> {
        calls.push(p);
        opts.before?.(calls.length);
        const ordered = p.sortOrder === "desc" && !opts.ignoreSort ? [...all].reverse() : all;
        const offset = p.offset ?? 0;
        return { tokens: ordered.slice(offset, offset + (p.limit ?? 10)), total: all.length };
      },
    };
  }
  /** The mark of a walk that ended at `token`: its created_at, and its id as the proof. */
  const at = (token: ApiToken) => ({ createdAt: token.created_at, ids: [token.id] });

  it("reads only the pages down to the mark, newest first, overlapping by one", async () => {
    const all = tokens(1000);
    const s = sorting(all);
    const newest = await listTokensSince(s, at(all[975]!), { pageSize: 10 });
    expect(newest?.map((t) => t.id)).toEqual(
      all
        .slice(975)
        .reverse()
        .map((t) => t.id),
    );
    expect(s.calls).toEqual([0, 9, 18].map((offset) => ({ limit: 10, offset, sortField: "created_at", sortOrder: "desc" })));
  });

  it("is one request when the first page reaches an older token", async () => {
    const all = tokens(300);
    const s = sorting(all);
    expect((await listTokensSince(s, at(all[250]!)))?.length).toBe(50);
    expect(s.calls).toHaveLength(1);
  });

  it("reads again when a newer token is deleted between two pages (the list shifted towards the front)", async () => {
    const all = tokens(100);
    const s = sorting(all, { before: (call) => (call === 2 ? void all.splice(95, 1) : undefined) });
    const newest = await listTokensSince(s, at(all[70]!), { pageSize: 10 });
    expect(newest?.map((t) => t.id)).toEqual(
      all
        .slice(70)
        .reverse()
        .map((t) => t.id),
    );
    expect(newest).toHaveLength(29);
    expect(s.calls.filter((c) => c.offset === 0)).toHaveLength(2);
  });

  it("reads each older token once more, never skips one, when a token is created between two pages", async () => {
    const all = tokens(100);
    const s = sorting(all, { before: (call) => (call === 2 ? void all.push({ ...tokens(1, "new")[0]!, created_at: 9000 }) : undefined) });
    const newest = await listTokensSince(s, at(all[70]!), { pageSize: 10 });
    expect(newest?.map((t) => t.id)).toEqual(
      all
        .slice(70, 100)
        .reverse()
        .map((t) => t.id),
    );
    expect(s.calls.filter((c) => c.offset === 0)).toHaveLength(1);
  });

  it("is undefined when the server does not sort by created_at desc (only a full walk can tell then)", async () => {
    const all = tokens(50);
    expect(await listTokensSince(sorting(all, { ignoreSort: true }), at(all[20]!))).toBeUndefined();
  });

  describe("proof of order", () => {
    /** `old` tokens sharing one created_at (a migration), then `fresh` ones a second apart; ascending creation order. */
    const tiedThenFresh = (old: number, fresh: number): ApiToken[] => [
      ...tokens(old, "old").map((t) => ({ ...t, created_at: 500 })),
      ...tokens(fresh, "new").map((t, i) => ({ ...t, created_at: 2000 + i })),
    ];

    it("a server listing oldest first, whose first pages are old tokens sharing one created_at, is not taken for sorted", async () => {
      const all = tiedThenFresh(120, 20);
      const s = sorting(all, { ignoreSort: true });
      // Each page of tied old tokens looks ordered "desc"; it is below the mark, so it proves nothing.
      expect(await listTokensSince(s, at(all[125]!), { pageSize: 10 })).toBeUndefined();
      expect(s.calls).toHaveLength(1);
    });

    it("a page at or above the mark proves nothing until the mark's ids are listed before anything older", async () => {
      const all = tiedThenFresh(5, 20);
      // An order that is neither: the newest token first, then the old tied ones, then the rest.
      const shuffled = [all[24]!, ...all.slice(0, 5), ...all.slice(5, 24)];
      const source = {
        async listTokens(p: ListTokensParams): Promise<TokenList> {
          const offset = p.offset ?? 0;
          return { tokens: shuffled.slice(offset, offset + (p.limit ?? 10)), total: shuffled.length };
        },
      };
      // Page 1 is [2019, 500, 500, …]: "descending", its first at or above the mark, and it reaches an older token.
      expect(await listTokensSince(source, at(all[20]!), { pageSize: 3 })).toBeUndefined();
      // With the newest as the only proof it would have passed: the rule needs the mark's own ids.
      expect(await listTokensSince(source, { createdAt: all[20]!.created_at, ids: [all[24]!.id] }, { pageSize: 3 })).toHaveLength(1);
    });

    it("ties never end a read early: tokens sharing the mark's created_at across pages are all read", async () => {
      const all = [
        ...tokens(30, "old"),
        ...tokens(25, "tie").map((t) => ({ ...t, created_at: 5000 })),
        ...tokens(3, "new").map((t) => ({ ...t, created_at: 6000 })),
      ];
      const s = sorting(all);
      const newest = await listTokensSince(s, { createdAt: 5000, ids: ["tie0000", "tie0024"] }, { pageSize: 10 });
      expect(newest?.map((t) => t.id).sort()).toEqual(
        all
          .slice(30)
          .map((t) => t.id)
          .sort(),
      );
    });

    it("a mark token gone meanwhile, or a mark without ids (an empty account), proves nothing", async () => {
      const all = tokens(40);
      expect(await listTokensSince(sorting(all), { createdAt: all[30]!.created_at, ids: ["revoked"] })).toBeUndefined();
      expect(await listTokensSince(sorting(all), { createdAt: 0, ids: [] })).toBeUndefined();
      const empty = sorting([]);
      expect(await listTokensSince(empty, { createdAt: 0, ids: ["t0000"] })).toBeUndefined();
    });

    it("a token created during the read does not spoil the proof", async () => {
      const all = tokens(60);
      const s = sorting(all, {
        before: (call) => (call === 2 ? void all.push({ ...tokens(1, "during")[0]!, created_at: 9000 }) : undefined),
      });
      const newest = await listTokensSince(s, at(all[45]!), { pageSize: 10 });
      expect(newest?.map((t) => t.id)).toEqual(expect.arrayContaining(all.slice(45, 60).map((t) => t.id)));
    });
  });
});
