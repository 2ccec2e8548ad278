/** The faults a fault matrix needs: deterministic 5xx, errors on HTTP 200, late commits, deletions during a walk, sort and limit handling. */
import type { RunningEmulator } from "../../src/emulator";
import { startEmulator } from "../../src/emulator";
import { call, login, type Session } from "./helpers";

let emu: RunningEmulator;
let s: Session;

beforeEach(async () => {
  emu = await startEmulator();
  s = await login(emu);
});
afterEach(async () => {
  await emu.close();
});

const list = (query = "") => call(emu, "GET", `/api-tokens${query}`, { headers: s.headers });
const create = (name: string) => call(emu, "POST", "/api-tokens", { headers: s.headers, body: { name } });

function seed(count: number): void {
  for (let i = 0; i < count; i++) emu.addToken({ name: `t-${String(i).padStart(3, "0")}`, createdAt: 1_700_000_000 + i });
}

test("serverErrorEvery: exactly every Nth request is the given 5xx, with a JSON envelope", async () => {
  emu.setFaults({ serverErrorEvery: 3 });
  const got: number[] = [];
  for (let i = 0; i < 9; i++) got.push((await list()).status);
  expect(got).toEqual([200, 200, 502, 200, 200, 502, 200, 200, 502]);
  emu.setFaults({ serverErrorEvery: 1, serverErrorStatus: 503 });
  const r = await list();
  expect(r.status).toBe(503);
  expect(r.json).toMatchObject({ status: false, message: "service temporarily unavailable" });
  expect(() => emu.setFaults({ serverErrorStatus: 404 })).toThrow(/serverErrorStatus/);
});

test("errorsAsHttp200: every error envelope is HTTP 200 with status false; successes and the control surface unchanged", async () => {
  emu.setFaults({ errorsAsHttp200: true, serverErrorEvery: 2 });
  const ok = await list();
  expect(ok.status).toBe(200);
  expect(ok.json.status).toBe(true);
  const injected = await list();
  expect(injected.status).toBe(200);
  expect(injected.json).toMatchObject({ status: false, message: "bad gateway" });
  const unauthorized = await call(emu, "GET", "/flavors");
  expect(unauthorized.status).toBe(200);
  expect(unauthorized.json).toMatchObject({ status: false, message: expect.stringMatching(/Authorization/) });
  expect((await call(emu, "DELETE", "/_emulator/tokens/nope")).status).toBe(404);
});

test("gatewayTimeoutCreates: 504 at once, the token appears createCommitDelayMs later, once", async () => {
  emu.setFaults({ gatewayTimeoutCreates: 1, createCommitDelayMs: 300 });
  const r = await create("late");
  expect(r.status).toBe(504);
  expect(r.json).toMatchObject({ status: false, message: "gateway timeout" });
  expect(emu.tokens()).toEqual([]);
  expect((await list()).json.total).toBe(0);
  await new Promise((resolve) => setTimeout(resolve, 450));
  expect(emu.tokens().map((t) => t.name)).toEqual(["late"]);
  expect((await create("next")).status).toBe(200);
  expect(emu.tokens()).toHaveLength(2);
});

test("gatewayTimeoutCreates: a commit pending at close never fires", async () => {
  emu.setFaults({ gatewayTimeoutCreates: 1, createCommitDelayMs: 10_000 });
  expect((await create("never")).status).toBe(504);
  const t0 = performance.now();
  await emu.close();
  expect(performance.now() - t0).toBeLessThan(1000);
  expect(emu.tokens()).toEqual([]);
});

test("deleteOnListRequest: the oldest token goes before the Nth list request is answered, once", async () => {
  seed(25);
  emu.setFaults({ deleteOnListRequest: 2 });
  const first = await list("?limit=10&offset=0&sortField=created_at&sortOrder=asc");
  expect(first.json.total).toBe(25);
  const second = await list("?limit=10&offset=9&sortField=created_at&sortOrder=asc");
  expect(second.json.total).toBe(24);
  // the list shifted left: the page no longer starts with the previous page's last token
  expect(second.json.data[0].id).not.toBe(first.json.data[9].id);
  expect(first.json.data[9].name).toBe("t-009");
  expect(second.json.data[0].name).toBe("t-010"); // a naive walk (offset += received) would skip t-010
  expect((await list()).json.total).toBe(24);
  expect(emu.tokens().map((t) => t.name)).not.toContain("t-000");
});

test("rejectSortParams: 400 naming the parameters; without them the list works", async () => {
  emu.setFaults({ rejectSortParams: true });
  const refused = await list("?sortField=created_at&sortOrder=asc");
  expect(refused.status).toBe(400);
  expect(refused.json.message).toMatch(/sortField/);
  expect((await list("?sortOrder=desc")).status).toBe(400);
  expect((await list("?limit=5")).status).toBe(200);
});

test("ignoreSortParams and ignoreLimit: the order of creation (oldest first) and the default page size apply", async () => {
  seed(15);
  emu.setFaults({ ignoreSortParams: true, ignoreLimit: true });
  const r = await list("?limit=50&sortField=created_at&sortOrder=desc");
  expect(r.status).toBe(200);
  expect(r.json.data).toHaveLength(10);
  expect(r.json.data.map((t: { name: string }) => t.name)).toEqual(Array.from({ length: 10 }, (_, i) => `t-${String(i).padStart(3, "0")}`));
  // Whatever the created_at: the order in which the tokens were stored, not a sort.
  const younger = emu.addToken({ name: "seeded-late-but-old", createdAt: 1 });
  const all = await list("?offset=10&sortField=created_at&sortOrder=asc");
  expect(all.json.data.map((t: { id: string }) => t.id).at(-1)).toBe(younger.id);
});

test("tokens sharing one created_at: addTokens and POST /_emulator/tokens with count; listed oldest first when the sort is ignored", async () => {
  const tied = emu.addTokens({ name: "migrated", createdAt: 1_600_000_000, count: 12 });
  expect(tied.map((t) => t.name)).toEqual(Array.from({ length: 12 }, (_, i) => `migrated-${i + 1}`));
  expect(new Set(tied.map((t) => t.created_at))).toEqual(new Set([1_600_000_000]));
  const r = await call(emu, "POST", "/_emulator/tokens", { body: { name: "batch", count: 3 } });
  expect(r.status).toBe(200);
  expect(r.json.data.map((t: { name: string }) => t.name)).toEqual(["batch-1", "batch-2", "batch-3"]);
  expect(new Set(r.json.data.map((t: { created_at: number }) => t.created_at)).size).toBe(1);
  for (const bad of [
    { name: "x", count: 0 },
    { name: "x", count: 1.5 },
    { name: "n".repeat(49), count: 10 },
  ]) {
    expect((await call(emu, "POST", "/_emulator/tokens", { body: bad })).status).toBe(400);
  }
  expect(() => emu.addTokens({ name: "x", count: -1 })).toThrow(/count/);
  expect(emu.tokens()).toHaveLength(15);
  emu.setFaults({ ignoreSortParams: true });
  const page = await list("?limit=13&sortField=created_at&sortOrder=desc");
  expect(page.json.data.map((t: { name: string }) => t.name)).toEqual([...tied.map((t) => t.name), "batch-1"]);
});

test("page sizes: set at start, overridden through faults (control surface too)", async () => {
  const sized = await startEmulator({ defaultPageSize: 10, maxPageSize: 50 });
  try {
    for (let i = 0; i < 60; i++) sized.addToken({ name: `n${i}` });
    const s2 = await login(sized);
    const get = (q: string) => call(sized, "GET", `/api-tokens${q}`, { headers: s2.headers });
    expect((await get("")).json.data).toHaveLength(10);
    expect((await get("?limit=100")).json.data).toHaveLength(50);
    expect((await call(sized, "POST", "/_emulator/faults", { body: { maxPageSize: 7, defaultPageSize: 3 } })).status).toBe(200);
    expect((await get("")).json.data).toHaveLength(3);
    expect((await get("?limit=100")).json.data).toHaveLength(7);
    const state = await call(sized, "GET", "/_emulator/state");
    expect(state.json.data.faults).toEqual({ maxPageSize: 7, defaultPageSize: 3 });
  } finally {
    await sized.close();
  }
});

test("the control surface takes every new fault and rejects bad values by name", async () => {
  const body = {
    serverErrorEvery: 3,
    serverErrorStatus: 504,
    errorsAsHttp200: true,
    gatewayTimeoutCreates: 2,
    createCommitDelayMs: 3000,
    deleteOnListRequest: 4,
    rejectSortParams: false,
    ignoreSortParams: true,
    ignoreLimit: false,
  };
  const r = await call(emu, "POST", "/_emulator/faults", { body });
  expect(r.status).toBe(200);
  expect(r.json.data).toEqual(body);
  for (const bad of [{ errorsAsHttp200: "yes" }, { deleteOnListRequest: 0 }, { createCommitDelayMs: -1 }, { maxPageSize: 1.5 }]) {
    const refused = await call(emu, "POST", "/_emulator/faults", { body: bad });
    expect(refused.status).toBe(400);
    expect(refused.json.message).toContain(Object.keys(bad)[0]);
  }
});
