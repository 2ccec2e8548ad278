import type { EmulatorFaults, RunningEmulator } from "../../src/emulator";
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

const flavors = () => call(emu, "GET", "/flavors", { headers: s.headers });

async function statuses(target: RunningEmulator, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(target, "GET", "/flavors")).status);
  return out;
}

test("latencyMs delays every response", async () => {
  emu.setFaults({ latencyMs: 200 });
  const t0 = performance.now();
  const r = await flavors();
  expect(r.status).toBe(200);
  expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
  emu.setFaults({});
  const t1 = performance.now();
  await flavors();
  expect(performance.now() - t1).toBeLessThan(150);
});

test("serverErrorRate 1: every request is a 500/502/503 JSON envelope", async () => {
  emu.setFaults({ serverErrorRate: 1 });
  const seen = new Set<number>();
  for (let i = 0; i < 30; i++) {
    const r = await flavors();
    expect([500, 502, 503]).toContain(r.status);
    expect(r.json).toMatchObject({ status: false, data: null });
    expect(typeof r.json.message).toBe("string");
    seen.add(r.status);
  }
  expect(seen.size).toBeGreaterThan(1);
});

test("htmlErrorRate 1: 502 with an HTML proxy page, not JSON", async () => {
  emu.setFaults({ htmlErrorRate: 1 });
  const r = await flavors();
  expect(r.status).toBe(502);
  expect(r.headers.get("content-type")).toMatch(/^text\/html/);
  expect(r.text).toMatch(/^<html>/);
  expect(() => JSON.parse(r.text)).toThrow();
});

test("rateLimitEvery: every Nth request is 429 with Retry-After (default 1)", async () => {
  emu.setFaults({ rateLimitEvery: 3 });
  const got = [];
  for (let i = 0; i < 6; i++) got.push(await flavors());
  expect(got.map((r) => r.status)).toEqual([200, 200, 429, 200, 200, 429]);
  expect(got[2].json).toMatchObject({ status: false, data: null });
  expect(got[2].headers.get("retry-after")).toBe("1");
  expect(got[0].headers.get("retry-after")).toBeNull();
  emu.setFaults({ rateLimitEvery: 1, retryAfterSeconds: 7 });
  const r = await flavors();
  expect(r.status).toBe(429);
  expect(r.headers.get("retry-after")).toBe("7");
});

test("dropConnectionRate 1: the client sees a failed request, no response", async () => {
  emu.setFaults({ dropConnectionRate: 1 });
  await expect(fetch(`${emu.url}/flavors`, { headers: s.headers })).rejects.toThrow();
  expect(emu.stats().byRoute["GET /flavors"]).toBe(1);
  emu.setFaults({});
  expect((await flavors()).status).toBe(200);
});

test("loseCreateResponses: the token is created, the client sees a failure, then normal again", async () => {
  emu.setFaults({ loseCreateResponses: 1 });
  const body = JSON.stringify({ name: "lost" });
  await expect(
    fetch(`${emu.url}/api-tokens`, { method: "POST", headers: { ...s.headers, "content-type": "application/json" }, body }),
  ).rejects.toThrow();
  expect(emu.tokens().map((t) => t.name)).toEqual(["lost"]);
  expect(emu.stats().tokenWrites).toBe(1);
  const next = await call(emu, "POST", "/api-tokens", { headers: s.headers, body: { name: "kept" } });
  expect(next.status).toBe(200);
  expect(emu.tokens().map((t) => t.name)).toEqual(["lost", "kept"]);
});

test("loseCreateResponses does not swallow failed creates or other requests", async () => {
  emu.setFaults({ loseCreateResponses: 1 });
  expect((await call(emu, "POST", "/api-tokens", { headers: s.headers, body: { name: "" } })).status).toBe(400);
  expect((await flavors()).status).toBe(200);
  await expect(
    fetch(`${emu.url}/api-tokens`, { method: "POST", headers: { ...s.headers, "content-type": "application/json" }, body: '{"name":"x"}' }),
  ).rejects.toThrow();
  expect(emu.tokens()).toHaveLength(1);
});

test("the same seed gives the same sequence; a rate is roughly honoured", async () => {
  const faults: EmulatorFaults = { serverErrorRate: 0.5, seed: 42 };
  const a = await startEmulator({ faults });
  const b = await startEmulator({ faults });
  try {
    const sa = await statuses(a, 40);
    const sb = await statuses(b, 40);
    expect(sa).toEqual(sb);
    const failed = sa.filter((x) => x >= 500).length;
    expect(failed).toBeGreaterThan(8);
    expect(failed).toBeLessThan(32);
    expect(sa).toContain(401);
    b.setFaults({ serverErrorRate: 0.5, seed: 7 });
    expect(await statuses(b, 40)).not.toEqual(sa);
    a.setFaults(faults); // replacing restarts the PRNG
    expect(await statuses(a, 40)).toEqual(sa);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test("paths restricts faults to matching prefixes", async () => {
  emu.setFaults({ serverErrorRate: 1, paths: ["/flavors"] });
  expect((await flavors()).status).toBeGreaterThanOrEqual(500);
  expect((await call(emu, "GET", "/api-tokens", { headers: s.headers })).status).toBe(200);
});

test("/_emulator/ is never subject to faults", async () => {
  emu.setFaults({ serverErrorRate: 1, dropConnectionRate: 1, latencyMs: 1000, rateLimitEvery: 1 });
  const t0 = performance.now();
  const r = await call(emu, "GET", "/_emulator/state");
  expect(r.status).toBe(200);
  expect(performance.now() - t0).toBeLessThan(500);
});

test("faults given at start apply from the first request", async () => {
  const faulty = await startEmulator({ faults: { rateLimitEvery: 1 } });
  try {
    expect((await call(faulty, "GET", "/flavors")).status).toBe(429);
  } finally {
    await faulty.close();
  }
});

test("invalid faults are rejected with the field named", async () => {
  expect(() => emu.setFaults({ serverErrorRate: 2 })).toThrow(/serverErrorRate/);
  expect(() => emu.setFaults({ rateLimitEvery: 0 })).toThrow(/rateLimitEvery/);
  expect(() => emu.setFaults({ latencyMS: 5 } as unknown as EmulatorFaults)).toThrow(/latencyMS/);
  await expect(startEmulator({ faults: { dropConnectionRate: -1 } })).rejects.toThrow(/dropConnectionRate/);
});
