import type { RunningEmulator } from "../../src/emulator";
import { startEmulator } from "../../src/emulator";
import { bearer, call, fakeClock, login, type Session } from "./helpers";

let emu: RunningEmulator;
let s: Session;
const clock = fakeClock();

beforeEach(async () => {
  emu = await startEmulator({ now: clock.now });
  s = await login(emu);
});
afterEach(async () => {
  await emu.close();
});

const post = (body: unknown) => call(emu, "POST", "/api-tokens", { headers: s.headers, body });
const put = (id: string, body: unknown) => call(emu, "PUT", `/api-tokens/${encodeURIComponent(id)}`, { headers: s.headers, body });
const list = (query = "") => call(emu, "GET", `/api-tokens${query}`, { headers: s.headers });

describe("create", () => {
  test("returns name, id, description, token, created_at (Unix seconds) and no last_used", async () => {
    const r = await post({ name: "ci", description: "for CI" });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe(true);
    expect(Object.keys(r.json.data).sort()).toEqual(["created_at", "description", "id", "name", "token"]);
    expect(r.json.data).toMatchObject({ name: "ci", description: "for CI", created_at: Math.floor(clock.now() / 1000) });
    expect(r.json.data.id).toMatch(/^tok_[0-9a-f]{16}$/);
    const claims = JSON.parse(Buffer.from(r.json.data.token.split(".")[1], "base64url").toString());
    expect(claims).toMatchObject({ typ: "api", tid: r.json.data.id });
    expect(claims.exp).toBeUndefined();
    expect(emu.tokens()).toEqual([{ ...r.json.data, last_used: 0 }]);
    expect(emu.stats().tokenWrites).toBe(1);
  });

  test("description defaults to empty; duplicate names are allowed", async () => {
    const a = await post({ name: "dup" });
    const b = await post({ name: "dup", description: null });
    expect(a.json.data.description).toBe("");
    expect(b.json.data.description).toBe("");
    expect(a.json.data.id).not.toBe(b.json.data.id);
    expect(a.json.data.token).not.toBe(b.json.data.token);
    expect(emu.tokens()).toHaveLength(2);
  });

  test("50 characters are accepted, also 50 emoji (code points, not UTF-16 units)", async () => {
    expect((await post({ name: "x".repeat(50) })).status).toBe(200);
    const emoji = "🚀".repeat(50);
    expect(emoji.length).toBe(100);
    const r = await post({ name: emoji });
    expect(r.status).toBe(200);
    expect(r.json.data.name).toBe(emoji);
  });

  test.each([
    [{ name: "x".repeat(51) }, /name.*50/],
    [{ name: "🚀".repeat(51) }, /name.*50/],
    [{ name: "" }, /name/],
    [{ name: "   " }, /name/],
    [{}, /name is required/],
    [{ name: 42 }, /name must be a string/],
    [{ name: "ok", description: 5 }, /description must be a string/],
    [{ name: "ok", description: "d".repeat(1001) }, /description.*1000/],
  ])("%j → 400 naming the field", async (body, message) => {
    const r = await post(body);
    expect(r.status).toBe(400);
    expect(r.json.status).toBe(false);
    expect(r.json.data).toBeNull();
    expect(r.json.message).toMatch(message);
    expect(emu.tokens()).toHaveLength(0);
    expect(emu.stats().tokenWrites).toBe(0);
  });

  test("the 51-character message names the field and the limit", async () => {
    const r = await post({ name: "x".repeat(51) });
    expect(r.json.message).toContain("name");
    expect(r.json.message).toContain("50");
  });

  test.each([
    ["{not json", /malformed JSON/],
    ["[1,2]", /JSON object/],
    ["", /JSON object/],
    ["null", /JSON object/],
  ])("body %j → 400", async (rawBody, message) => {
    const r = await call(emu, "POST", "/api-tokens", {
      headers: { ...s.headers, "content-type": "application/json" },
      rawBody,
    });
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(message);
  });

  test("credentials are checked before the body", async () => {
    const r = await call(emu, "POST", "/api-tokens", { rawBody: "{not json" });
    expect(r.status).toBe(401);
  });

  test("an API token can create tokens", async () => {
    const seed = emu.addToken({ name: "seed" });
    const r = await call(emu, "POST", "/api-tokens", { headers: bearer(seed.token), body: { name: "child" } });
    expect(r.status).toBe(200);
    expect(emu.tokens().map((t) => t.name)).toEqual(["seed", "child"]);
  });
});

describe("update", () => {
  test("renames, keeps id, value and created_at; omitted description is kept", async () => {
    const created = (await post({ name: "old", description: "keep me" })).json.data;
    clock.advance(5_000);
    const r = await put(created.id, { name: "new" });
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual({ ...created, name: "new" });
    expect(r.json.data.last_used).toBeUndefined();
    const r2 = await put(created.id, { name: "new", description: "" });
    expect(r2.json.data.description).toBe("");
    expect(emu.tokens()[0]).toMatchObject({ id: created.id, token: created.token, name: "new", description: "" });
    expect(emu.stats().tokenWrites).toBe(3);
  });

  test("the token value keeps authenticating after an update", async () => {
    const created = (await post({ name: "a" })).json.data;
    await put(created.id, { name: "b" });
    expect((await call(emu, "GET", "/flavors", { headers: bearer(created.token) })).status).toBe(200);
  });

  test("unknown id → 404; bad body → 400; same name limit", async () => {
    const created = (await post({ name: "a" })).json.data;
    const missing = await put("tok_doesnotexist", { name: "x" });
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ status: false, data: null });
    expect(missing.json.message).toMatch(/not found/);
    const long = await put(created.id, { name: "y".repeat(51) });
    expect(long.status).toBe(400);
    expect(long.json.message).toMatch(/name.*50/);
    const noName = await put(created.id, { description: "only" });
    expect(noName.status).toBe(400);
    expect(emu.tokens()[0]).toMatchObject({ name: "a", description: "" });
  });

  test("PUT without id is 405; GET/DELETE of one token are 405 with Allow: PUT", async () => {
    const created = (await post({ name: "a" })).json.data;
    const r = await call(emu, "PUT", "/api-tokens", { headers: s.headers, body: { name: "x" } });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, POST");
    for (const method of ["GET", "DELETE"]) {
      const one = await call(emu, method, `/api-tokens/${created.id}`, { headers: s.headers });
      expect(one.status).toBe(405);
      expect(one.headers.get("allow")).toBe("PUT");
      expect(one.json.status).toBe(false);
    }
    expect(emu.tokens()).toHaveLength(1);
  });
});

describe("list", () => {
  async function seed(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push((await post({ name: `t${String(i).padStart(2, "0")}` })).json.data.id);
      clock.advance(1_000);
    }
    return ids;
  }

  test("default: created_at desc, page of 10, total counts all, last_used included", async () => {
    const ids = await seed(12);
    const r = await list();
    expect(r.status).toBe(200);
    expect(r.json.total).toBe(12);
    expect(r.json.data).toHaveLength(10);
    expect(r.json.data.map((t: { id: string }) => t.id)).toEqual([...ids].reverse().slice(0, 10));
    expect(Object.keys(r.json.data[0]).sort()).toEqual(["created_at", "description", "id", "last_used", "name", "token"]);
  });

  test("limit and offset page through; beyond the end is empty", async () => {
    const ids = await seed(5);
    const page = await list("?limit=2&offset=1&sortOrder=asc");
    expect(page.json.data.map((t: { id: string }) => t.id)).toEqual(ids.slice(1, 3));
    expect(page.json.total).toBe(5);
    const past = await list("?offset=99");
    expect(past.json.data).toEqual([]);
    expect(past.json.total).toBe(5);
  });

  test("limit above the maximum is clamped to 100", async () => {
    for (let i = 0; i < 105; i++) emu.addToken({ name: `bulk${i}` });
    const r = await list("?limit=1000");
    expect(r.status).toBe(200);
    expect(r.json.data).toHaveLength(100);
    expect(r.json.total).toBe(105);
  });

  test("custom page sizes", async () => {
    const small = await startEmulator({ defaultPageSize: 2, maxPageSize: 3 });
    try {
      const ss = await login(small);
      for (let i = 0; i < 5; i++) small.addToken({ name: `n${i}` });
      expect((await call(small, "GET", "/api-tokens", { headers: ss.headers })).json.data).toHaveLength(2);
      expect((await call(small, "GET", "/api-tokens?limit=50", { headers: ss.headers })).json.data).toHaveLength(3);
    } finally {
      await small.close();
    }
  });

  test("sort by name asc/desc (case-insensitive order keyword)", async () => {
    await post({ name: "bravo" });
    await post({ name: "alpha" });
    await post({ name: "charlie" });
    const asc = await list("?sortField=name&sortOrder=asc");
    expect(asc.json.data.map((t: { name: string }) => t.name)).toEqual(["alpha", "bravo", "charlie"]);
    const desc = await list("?sortField=name&sortOrder=DESC");
    expect(desc.json.data.map((t: { name: string }) => t.name)).toEqual(["charlie", "bravo", "alpha"]);
  });

  test("sort by last_used; ties broken by id in the same direction", async () => {
    const [a, b, c] = await seed(3);
    const used = emu.tokens().find((t) => t.id === b)!;
    clock.advance(10_000);
    await call(emu, "GET", "/flavors", { headers: bearer(used.token) });
    const r = await list("?sortField=last_used&sortOrder=desc");
    const order = r.json.data.map((t: { id: string }) => t.id);
    expect(order[0]).toBe(b);
    expect(order.slice(1)).toEqual([a, c].sort().reverse());
    expect(r.json.data[0].last_used).toBe(Math.floor(clock.now() / 1000));
    const byId = await list("?sortField=id&sortOrder=asc");
    expect(byId.json.data.map((t: { id: string }) => t.id)).toEqual([a, b, c].sort());
  });

  test("same created_at: ties broken by id", async () => {
    for (let i = 0; i < 4; i++) await post({ name: `same${i}` });
    const ids = emu.tokens().map((t) => t.id);
    const r = await list("?sortOrder=asc");
    expect(r.json.data.map((t: { id: string }) => t.id)).toEqual([...ids].sort());
  });

  test.each([
    ["?limit=0", /limit/],
    ["?limit=-1", /limit/],
    ["?limit=abc", /limit/],
    ["?limit=1.5", /limit/],
    ["?limit=", /limit/],
    ["?offset=-1", /offset/],
    ["?offset=x", /offset/],
    ["?sortField=password", /sortField.*created_at/],
    ["?sortOrder=up", /sortOrder/],
  ])("%s → 400 naming the parameter", async (query, message) => {
    const r = await list(query);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ status: false, data: null });
    expect(r.json.message).toMatch(message);
  });
});

describe("storeNames", () => {
  test.each([
    ["trimmed", " Trim-Me ", "Trim-Me"],
    ["lower-cased", " Case-Me ", " case-me "],
    ["as-given", " As-Is ", " As-Is "],
  ] as const)("%s: create and update store that spelling", async (storeNames, sent, stored) => {
    const other = await startEmulator({ now: clock.now, storeNames });
    try {
      const session = await login(other);
      const created = await call(other, "POST", "/api-tokens", { headers: session.headers, body: { name: sent } });
      expect(created.json.data.name).toBe(stored);
      const updated = await call(other, "PUT", `/api-tokens/${created.json.data.id}`, {
        headers: session.headers,
        body: { name: `${sent}2` },
      });
      expect(updated.json.data.name).toBe(
        storeNames === "trimmed" ? `${sent}2`.trim() : storeNames === "lower-cased" ? `${sent}2`.toLowerCase() : `${sent}2`,
      );
      expect(other.tokens().map((t) => t.name)).toEqual([updated.json.data.name]);
    } finally {
      await other.close();
    }
  });

  test("an unknown value is refused at start", async () => {
    await expect(startEmulator({ storeNames: "upper" as never })).rejects.toThrow(
      /storeNames must be one of as-given, trimmed, lower-cased/,
    );
  });
});
