import { md5Hex, startEmulator } from "../../src/emulator";
import { bearer, call, fakeClock, login, useEmulator } from "./helpers";

describe("login", () => {
  const ctx = useEmulator({
    users: [
      { username: "demo", password: "demo-password", email: "demo@example.test" },
      { username: "alice", password: "pä$$wörd" },
    ],
  });

  test("md5 password yields user data and two JWT-form tokens", async () => {
    const r = await call(ctx.emu, "POST", "/authenticate/login", {
      body: { username: "demo", password: md5Hex("demo-password") },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: true, data: { username: "demo", email: "demo@example.test" } });
    expect(typeof r.json.message).toBe("string");
    for (const t of [r.json.data.access_token, r.json.data.refresh_token]) {
      expect(t).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    }
    const payload = JSON.parse(Buffer.from(r.json.data.access_token.split(".")[1], "base64url").toString());
    expect(payload).toMatchObject({ typ: "access", sub: "demo" });
    expect(payload.exp - payload.iat).toBe(1800);
    const refresh = JSON.parse(Buffer.from(r.json.data.refresh_token.split(".")[1], "base64url").toString());
    expect(refresh).toMatchObject({ typ: "refresh", sub: "demo" });
    expect(refresh.exp - refresh.iat).toBe(7200);
  });

  test("upper-case md5 hex is accepted; non-ASCII passwords hash as UTF-8; default e-mail", async () => {
    const r = await call(ctx.emu, "POST", "/authenticate/login", {
      body: { username: "alice", password: md5Hex("pä$$wörd").toUpperCase() },
    });
    expect(r.status).toBe(200);
    expect(r.json.data.email).toBe("alice@example.test");
  });

  test.each([
    ["wrong password", { username: "demo", password: md5Hex("nope") }],
    ["plain-text password", { username: "demo", password: "demo-password" }],
    ["unknown user", { username: "mallory", password: md5Hex("demo-password") }],
    ["username case differs", { username: "Demo", password: md5Hex("demo-password") }],
  ])("%s → 401 without saying which part was wrong", async (_label, body) => {
    const r = await call(ctx.emu, "POST", "/authenticate/login", { body });
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ status: false, message: "invalid username or password", data: null });
  });

  test.each([
    [{ password: md5Hex("x") }, "username is required"],
    [{ username: "demo" }, "password is required"],
    [{ username: 7, password: "x" }, "username must be a string"],
  ])("missing or mistyped field %j → 400 naming it", async (body, message) => {
    const r = await call(ctx.emu, "POST", "/authenticate/login", { body });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ status: false, message });
  });

  test("successful logins are counted, failed ones are not", async () => {
    ctx.emu.resetStats();
    await login(ctx.emu);
    await call(ctx.emu, "POST", "/authenticate/login", { body: { username: "demo", password: "x" } });
    expect(ctx.emu.stats().logins).toBe(1);
    expect(ctx.emu.stats().byRoute["POST /authenticate/login"]).toBe(2);
  });
});

describe("authentication of API calls", () => {
  const ctx = useEmulator();

  test("access token plus refresh-token header is accepted", async () => {
    const s = await login(ctx.emu);
    const r = await call(ctx.emu, "GET", "/api-tokens", { headers: s.headers });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe(true);
  });

  test("API token alone is accepted and stamps last_used", async () => {
    const s = await login(ctx.emu);
    const created = await call(ctx.emu, "POST", "/api-tokens", { headers: s.headers, body: { name: "ci" } });
    const { id, token } = created.json.data;
    expect(ctx.emu.tokens().find((t) => t.id === id)?.last_used).toBe(0);
    const r = await call(ctx.emu, "GET", "/flavors", { headers: bearer(token) });
    expect(r.status).toBe(200);
    expect(ctx.emu.tokens().find((t) => t.id === id)?.last_used).toBeGreaterThan(0);
  });

  test("no Authorization header → 401 envelope with WWW-Authenticate", async () => {
    const r = await call(ctx.emu, "GET", "/flavors");
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ status: false, data: null });
    expect(r.json.message).toMatch(/Authorization/);
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  test("access token without refresh-token header → 401 naming the header", async () => {
    const s = await login(ctx.emu);
    const r = await call(ctx.emu, "GET", "/flavors", { headers: bearer(s.access) });
    expect(r.status).toBe(401);
    expect(r.json.message).toMatch(/refresh-token/);
  });

  test("garbage, foreign or mismatched refresh tokens → 401", async () => {
    const s = await login(ctx.emu);
    const other = await startEmulator();
    try {
      const foreign = await login(other);
      const cases: Record<string, string>[] = [
        { ...bearer(s.access), "refresh-token": "not-a-jwt" },
        { ...bearer(s.access), "refresh-token": foreign.refresh },
        { ...bearer(s.access), "refresh-token": s.access },
        { ...bearer(foreign.access), "refresh-token": foreign.refresh },
        { ...bearer(s.refresh), "refresh-token": s.refresh },
        { authorization: `Basic ${s.access}`, "refresh-token": s.refresh },
      ];
      for (const headers of cases) {
        const r = await call(ctx.emu, "GET", "/flavors", { headers });
        expect(r.status).toBe(401);
        expect(r.json.status).toBe(false);
      }
    } finally {
      await other.close();
    }
  });

  test("tampered token payload is rejected", async () => {
    const s = await login(ctx.emu);
    const [h, p, sig] = s.access.split(".");
    const claims = JSON.parse(Buffer.from(p, "base64url").toString());
    const forged = [h, Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 1e6 })).toString("base64url"), sig].join(".");
    const r = await call(ctx.emu, "GET", "/flavors", { headers: { ...bearer(forged), "refresh-token": s.refresh } });
    expect(r.status).toBe(401);
  });

  test("a deleted API token stops authenticating", async () => {
    const rec = ctx.emu.addToken({ name: "console-deleted" });
    expect((await call(ctx.emu, "GET", "/flavors", { headers: bearer(rec.token) })).status).toBe(200);
    expect(ctx.emu.deleteToken(rec.id)).toBe(true);
    const r = await call(ctx.emu, "GET", "/flavors", { headers: bearer(rec.token) });
    expect(r.status).toBe(401);
    expect(r.json.message).toMatch(/API token/);
    expect(ctx.emu.deleteToken(rec.id)).toBe(false);
  });
});

describe("expiry", () => {
  test("access token expires after its TTL via the injected clock; API tokens never do", async () => {
    const clock = fakeClock();
    const emu = await startEmulator({ now: clock.now });
    try {
      const s = await login(emu);
      const api = emu.addToken({ name: "long-lived" });
      clock.advance(1799_000);
      expect((await call(emu, "GET", "/flavors", { headers: s.headers })).status).toBe(200);
      clock.advance(1_000);
      const r = await call(emu, "GET", "/flavors", { headers: s.headers });
      expect(r.status).toBe(401);
      expect(r.json).toEqual({ status: false, message: "access token expired", data: null });
      clock.advance(365 * 24 * 3600_000);
      expect((await call(emu, "GET", "/flavors", { headers: bearer(api.token) })).status).toBe(200);
      expect(emu.tokens()[0].last_used).toBe(Math.floor(clock.now() / 1000));
    } finally {
      await emu.close();
    }
  });

  test("refresh token expiry is enforced even with a fresh access token", async () => {
    const clock = fakeClock();
    const emu = await startEmulator({ now: clock.now, accessTokenTtlSeconds: 60, refreshTokenTtlSeconds: 100 });
    try {
      const old = await login(emu);
      clock.advance(101_000);
      const fresh = await login(emu);
      const r = await call(emu, "GET", "/flavors", { headers: { ...bearer(fresh.access), "refresh-token": old.refresh } });
      expect(r.status).toBe(401);
      expect(r.json.message).toBe("refresh token expired");
      expect((await call(emu, "GET", "/flavors", { headers: fresh.headers })).status).toBe(200);
    } finally {
      await emu.close();
    }
  });

  test("expireAccessTokens() rejects earlier access tokens but not later logins", async () => {
    const emu = await startEmulator();
    try {
      const before = await login(emu);
      emu.expireAccessTokens();
      const r = await call(emu, "GET", "/flavors", { headers: before.headers });
      expect(r.status).toBe(401);
      expect(r.json.message).toBe("access token expired");
      const after = await login(emu);
      expect((await call(emu, "GET", "/flavors", { headers: after.headers })).status).toBe(200);
    } finally {
      await emu.close();
    }
  });

  test("no refresh endpoint exists", async () => {
    const emu = await startEmulator();
    try {
      const s = await login(emu);
      const r = await call(emu, "POST", "/authenticate/refresh", { headers: s.headers, body: { refresh_token: s.refresh } });
      expect(r.status).toBe(404);
      expect(r.json.status).toBe(false);
    } finally {
      await emu.close();
    }
  });
});
