import { md5Hex, startEmulator } from "../../src/emulator";
import { call, fakeClock, login } from "./helpers";

const loginBody = { body: { username: "demo", password: md5Hex("demo-password") } };

test("rateLimit.loginsPerMinute: logins beyond the limit are 429 with Retry-After until the minute has room, per user", async () => {
  const clock = fakeClock();
  const emu = await startEmulator({
    now: clock.now,
    users: [
      { username: "demo", password: "demo-password" },
      { username: "other", password: "other-password" },
    ],
    rateLimit: { loginsPerMinute: 2 },
  });
  try {
    expect((await call(emu, "POST", "/authenticate/login", loginBody)).status).toBe(200);
    clock.advance(20_000);
    expect((await call(emu, "POST", "/authenticate/login", loginBody)).status).toBe(200);
    const refused = await call(emu, "POST", "/authenticate/login", loginBody);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("40");
    expect(refused.json).toEqual({
      status: false,
      message: "rate limit exceeded: at most 2 logins per minute per user; retry after 40 s",
      data: null,
    });
    // Another user has a window of its own.
    expect((await login(emu, "other", "other-password")).access).toBeTruthy();
    // A refused login does not count: once the first login leaves the window, one more is accepted.
    clock.advance(40_001);
    expect((await call(emu, "POST", "/authenticate/login", loginBody)).status).toBe(200);
    expect((await call(emu, "POST", "/authenticate/login", loginBody)).status).toBe(429);
    expect(emu.stats()).toMatchObject({ logins: 4, throttled: 2 });
  } finally {
    await emu.close();
  }
});

test("rateLimit.requestsPerSecond: requests of one user beyond the limit within a second are 429 with Retry-After: 1", async () => {
  const clock = fakeClock();
  const emu = await startEmulator({ now: clock.now, rateLimit: { requestsPerSecond: 3 } });
  try {
    const s = await login(emu); // the login is one of the user's requests
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(emu, "GET", "/flavors", { headers: s.headers })).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
    const refused = await call(emu, "GET", "/api-tokens", { headers: s.headers });
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.json.message).toBe("rate limit exceeded: at most 3 requests per second per user; retry after 1 s");
    clock.advance(1001);
    expect((await call(emu, "GET", "/flavors", { headers: s.headers })).status).toBe(200);
    // Unauthenticated requests are refused before they count.
    expect((await call(emu, "GET", "/flavors")).status).toBe(401);
  } finally {
    await emu.close();
  }
});

test("rateLimit is checked: positive integers only", async () => {
  await expect(startEmulator({ rateLimit: { requestsPerSecond: 0 } })).rejects.toThrow(
    /rateLimit.requestsPerSecond must be an integer >= 1/,
  );
  await expect(startEmulator({ latencyMs: -1 })).rejects.toThrow(/latencyMs must be a number >= 0/);
});

test("the latencyMs option delays every API request and stays when faults are replaced", async () => {
  const emu = await startEmulator({ latencyMs: 150 });
  try {
    emu.setFaults({});
    const t0 = performance.now();
    expect((await call(emu, "POST", "/authenticate/login", loginBody)).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    const t1 = performance.now();
    await call(emu, "GET", "/_emulator/state");
    expect(performance.now() - t1).toBeLessThan(140);
  } finally {
    await emu.close();
  }
});
