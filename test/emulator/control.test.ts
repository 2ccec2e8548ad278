import type { RunningEmulator } from "../../src/emulator";
import { startEmulator } from "../../src/emulator";
import { bearer, call, login } from "./helpers";

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await startEmulator();
});
afterEach(async () => {
  await emu.close();
});

test("GET /_emulator/state: tokens with values, stats and faults; control calls are not counted", async () => {
  const s = await login(emu);
  const created = (await call(emu, "POST", "/api-tokens", { headers: s.headers, body: { name: "ci" } })).json.data;
  const r = await call(emu, "GET", "/_emulator/state");
  expect(r.status).toBe(200);
  expect(r.json.status).toBe(true);
  expect(r.json.data.tokens).toEqual([{ ...created, last_used: 0 }]);
  expect(r.json.data.stats).toEqual({
    // TCP connections, the control surface's too: as many as the test's fetch opened
    connections: expect.any(Number),
    requests: 2,
    logins: 1,
    throttled: 0,
    tokenWrites: 1,
    byRoute: { "POST /authenticate/login": 1, "POST /api-tokens": 1 },
  });
  expect(r.json.data.faults).toEqual({});
  expect(emu.stats().requests).toBe(2);
});

test("POST /_emulator/faults sets and clears faults; invalid faults → 400", async () => {
  const set = await call(emu, "POST", "/_emulator/faults", { body: { rateLimitEvery: 1, retryAfterSeconds: 3 } });
  expect(set.status).toBe(200);
  const limited = await call(emu, "GET", "/flavors");
  expect(limited.status).toBe(429);
  expect(limited.headers.get("retry-after")).toBe("3");
  expect((await call(emu, "POST", "/_emulator/faults", { body: {} })).status).toBe(200);
  expect((await call(emu, "GET", "/flavors")).status).toBe(401);
  const bad = await call(emu, "POST", "/_emulator/faults", { body: { htmlErrorRate: "often" } });
  expect(bad.status).toBe(400);
  expect(bad.json.message).toMatch(/htmlErrorRate/);
  const malformed = await call(emu, "POST", "/_emulator/faults", { rawBody: "{" });
  expect(malformed.status).toBe(400);
});

test("POST /_emulator/tokens adds a pre-existing token that authenticates", async () => {
  const r = await call(emu, "POST", "/_emulator/tokens", { body: { name: "legacy", description: "old", createdAt: 1_600_000_000 } });
  expect(r.status).toBe(200);
  expect(r.json.data).toMatchObject({ name: "legacy", description: "old", created_at: 1_600_000_000, last_used: 0 });
  expect((await call(emu, "GET", "/flavors", { headers: bearer(r.json.data.token) })).status).toBe(200);
  expect(emu.tokens()).toHaveLength(1);
  const bad = await call(emu, "POST", "/_emulator/tokens", { body: { name: "n".repeat(51) } });
  expect(bad.status).toBe(400);
  expect(bad.json.message).toMatch(/name.*50/);
  const badTime = await call(emu, "POST", "/_emulator/tokens", { body: { name: "x", createdAt: "yesterday" } });
  expect(badTime.status).toBe(400);
  expect(emu.tokens()).toHaveLength(1);
});

test("DELETE /_emulator/tokens/{id} deletes; a second delete → 404", async () => {
  const rec = emu.addToken({ name: "gone" });
  const r = await call(emu, "DELETE", `/_emulator/tokens/${rec.id}`);
  expect(r.status).toBe(200);
  expect(emu.tokens()).toEqual([]);
  expect((await call(emu, "GET", "/flavors", { headers: bearer(rec.token) })).status).toBe(401);
  expect((await call(emu, "DELETE", `/_emulator/tokens/${rec.id}`)).status).toBe(404);
});

test("expire-access-tokens and reset-stats", async () => {
  const s = await login(emu);
  expect((await call(emu, "POST", "/_emulator/expire-access-tokens")).status).toBe(200);
  const r = await call(emu, "GET", "/flavors", { headers: s.headers });
  expect(r.json.message).toBe("access token expired");
  expect((await call(emu, "POST", "/_emulator/reset-stats")).status).toBe(200);
  expect(emu.stats()).toEqual({ connections: 0, requests: 0, logins: 0, throttled: 0, tokenWrites: 0, byRoute: {} });
});

test("unknown control route → 404, wrong method → 405", async () => {
  expect((await call(emu, "GET", "/_emulator/nothing")).status).toBe(404);
  const r = await call(emu, "DELETE", "/_emulator/state");
  expect(r.status).toBe(405);
  expect(r.headers.get("allow")).toBe("GET");
});

test("programmatic addToken: createdAt, creation order, validation", () => {
  const a = emu.addToken({ name: "a", createdAt: 1_700_000_000 });
  const b = emu.addToken({ name: "b", description: "second", createdAt: 1_600_000_000 });
  expect(a.created_at).toBe(1_700_000_000);
  expect(emu.tokens().map((t) => t.id)).toEqual([a.id, b.id]);
  expect(b).toMatchObject({ description: "second", last_used: 0 });
  expect(() => emu.addToken({ name: "" })).toThrow(/name/);
  expect(() => emu.addToken({ name: "x".repeat(51) })).toThrow(/50/);
  expect(() => emu.addToken({ name: "x", createdAt: 1.5 })).toThrow(/createdAt/);
});

test("tokens() returns a snapshot, not live objects", () => {
  emu.addToken({ name: "orig" });
  const snap = emu.tokens();
  (snap[0] as { name: string }).name = "mutated";
  expect(emu.tokens()[0].name).toBe("orig");
});
