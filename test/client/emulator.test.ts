/**
 * The client over real loopback HTTP against the emulator: both credential forms, expiry and
 * transparent re-login, every injected fault, and pagination across many tokens.
 */
import type { GpuCloudClientOptions } from "../../src/client";
import { describeOffer, listAllTokens, md5Hex, selectFlavors } from "../../src/client";
import type { EmulatorOptions, RunningEmulator } from "../../src/emulator";
import { startEmulator } from "../../src/emulator";
import type { Harness } from "./helpers";
import { caught, closeAfterEach, recordingClient, track } from "./helpers";

closeAfterEach();

async function emulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return track(await startEmulator(options));
}

function connect(emu: RunningEmulator, options: Partial<GpuCloudClientOptions> = {}): Harness {
  return recordingClient({
    baseUrl: `${emu.url}/`,
    credentials: { username: "demo", password: "demo-password" },
    requestTimeoutMs: 3000,
    ...options,
  });
}

describe("credentials", () => {
  it("password form: lazy login, flavors, create, list, update", async () => {
    const emu = await emulator();
    const { client, logs } = connect(emu);
    const groups = await client.listFlavors();
    expect(groups.length).toBeGreaterThan(0);
    expect(selectFlavors(groups, {}).length).toBeGreaterThan(0);
    expect(describeOffer(groups, {})).toMatch(/^region ".+" \(id .+\) offers: /);
    const regionId = groups[0]!.products[0]!.region_id;
    const inRegion = await client.listFlavors(regionId);
    expect(selectFlavors(inRegion, { regionId })).toHaveLength(selectFlavors(inRegion, {}).length);

    const created = await client.createToken({ name: "ci", description: "for CI" });
    expect(created).toMatchObject({ name: "ci", description: "for CI" });
    expect(created.token.length).toBeGreaterThan(10);
    const page = await client.listTokens({ limit: 5, offset: 0, sortField: "created_at", sortOrder: "asc" });
    expect(page.total).toBe(1);
    expect(page.tokens[0]).toMatchObject({ id: created.id, name: "ci", last_used: expect.any(Number) });
    const updated = await client.updateToken(created.id, { name: "ci-2" });
    expect(updated).toMatchObject({ id: created.id, name: "ci-2", description: "for CI", token: created.token });
    expect(emu.stats().logins).toBe(1);
    expect(logs).toContain("logged in as demo");
  });

  it("md5 form logs in with the given hash", async () => {
    const emu = await emulator({ users: [{ username: "bob", password: "s3cret!" }] });
    const { client } = connect(emu, { credentials: { username: "bob", passwordMd5: md5Hex("s3cret!").toUpperCase() } });
    expect(await client.login()).toMatchObject({ username: "bob", email: "bob@example.test" });
    const wrong = connect(emu, { credentials: { username: "bob", password: "nope" } }).client;
    const e = await caught(wrong.listFlavors());
    expect(e.kind).toBe("auth");
    expect(e.message).toMatch(/login as bob failed \(HTTP 401\): invalid username or password/);
  });

  it("API token form: no login; a deleted token is rejected for good", async () => {
    const emu = await emulator();
    const record = emu.addToken({ name: "automation" });
    const { client } = connect(emu, { credentials: { apiToken: record.token } });
    const { tokens } = await client.listTokens();
    expect(tokens.map((t) => t.name)).toEqual(["automation"]);
    expect(emu.stats().logins).toBe(0);
    emu.deleteToken(record.id);
    const before = emu.stats().requests;
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("auth");
    expect(e.message).toMatch(/the API token was rejected \(HTTP 401\)/);
    expect(e.message).not.toContain(record.token);
    expect(emu.stats().requests - before).toBe(1);
  });
});

describe("connections", () => {
  it("connections: 1 keeps one connection for requests sent one after another (as the runtime script does)", async () => {
    const emu = await emulator();
    const { client } = connect(emu, { connections: 1 });
    await client.listFlavors();
    await client.listTokens({ limit: 5, offset: 0 });
    await client.listFlavors();
    expect(emu.stats()).toMatchObject({ requests: 4, logins: 1, connections: 1 });
  });

  it("by default, concurrent calls run side by side on connections of their own", async () => {
    const emu = await emulator({ faults: { latencyMs: 150 } });
    const { client } = connect(emu);
    await client.login();
    const started = Date.now();
    await Promise.all([client.listFlavors(), client.listFlavors(), client.listFlavors()]);
    expect(Date.now() - started).toBeLessThan(400);
    expect(emu.stats().connections).toBeGreaterThanOrEqual(3);
  });

  it("connections must be a positive integer", async () => {
    const emu = await emulator();
    for (const connections of [0, 1.5, -1]) {
      expect(() => connect(emu, { connections })).toThrow(/connections must be a positive integer/);
    }
  });

  it("close() during a request lets it finish; later calls fail", async () => {
    const emu = await emulator();
    const { client } = connect(emu);
    await client.login();
    emu.setFaults({ latencyMs: 300 });
    const pending = client.listFlavors();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await client.close();
    expect((await pending).length).toBeGreaterThan(0);
    expect((await caught(client.listFlavors())).message).toMatch(/closed/);
  });
});

describe("expiry", () => {
  it("logs in again transparently when the access token is rejected as expired", async () => {
    const emu = await emulator();
    const { client, logs } = connect(emu);
    await client.listFlavors();
    emu.expireAccessTokens();
    await client.listTokens();
    await client.createToken({ name: "after-expiry" });
    expect(emu.stats().logins).toBe(2);
    expect(logs.some((l) => /access token rejected by GET \/api-tokens \(HTTP 401\); logging in again/.test(l))).toBe(true);
  });

  it("logs in again proactively before the JWT's exp (shared fake clock)", async () => {
    let now = Date.UTC(2025, 0, 1);
    const emu = await emulator({ now: () => now, accessTokenTtlSeconds: 1800 });
    const { client } = connect(emu, { now: () => now });
    await client.listFlavors();
    now += 1750_000; // 50 s left
    await client.listFlavors();
    expect(emu.stats().logins).toBe(2);
    expect(emu.stats().byRoute["GET /flavors"]).toBe(2); // no request was rejected and repeated
    now += 7200_000; // far past both lifetimes: the server would reject, the client renews first
    await client.listFlavors();
    expect(emu.stats().logins).toBe(3);
    expect(emu.stats().byRoute["GET /flavors"]).toBe(3);
  });

  it("re-logs in when the server's clock runs ahead of the client's", async () => {
    let serverNow = Date.UTC(2025, 0, 1);
    const emu = await emulator({ now: () => serverNow, accessTokenTtlSeconds: 600 });
    const { client } = connect(emu); // real clock: can't see the expiry coming
    await client.listFlavors();
    serverNow += 700_000;
    await client.listFlavors();
    expect(emu.stats().logins).toBe(2);
  });
});

describe("faults", () => {
  it("latency: fine within the request timeout, a timeout error beyond it", async () => {
    const emu = await emulator({ faults: { latencyMs: 60 } });
    expect((await connect(emu).client.listFlavors()).length).toBeGreaterThan(0);
    const slow = connect(emu, { requestTimeoutMs: 20, retry: { maxAttempts: 2 } }).client;
    const e = await caught(slow.listFlavors());
    expect(e.kind).toBe("timeout");
    expect(e.attempts).toBe(2);
  });

  it("5xx share: every operation still succeeds through retries", async () => {
    const emu = await emulator({ faults: { serverErrorRate: 0.4, seed: 7 } });
    const { client, logs } = connect(emu, { retry: { maxAttempts: 8 } });
    for (let i = 0; i < 10; i++) await client.listFlavors();
    for (let i = 0; i < 5; i++) await client.createToken({ name: `t-${i}` });
    expect(logs.some((l) => /^retrying GET \/flavors after HTTP 50[023] \(attempt 2\/8, waiting /.test(l))).toBe(true);
    // a create that failed with 5xx was reconciled, never duplicated
    const names = emu
      .tokens()
      .map((t) => t.name)
      .sort();
    expect(names).toEqual(["t-0", "t-1", "t-2", "t-3", "t-4"]);
  });

  it("5xx on creates: reconciled by listing, then posted again (the emulator did not create)", async () => {
    const emu = await emulator({ faults: { serverErrorRate: 0.5, seed: 2, paths: ["/api-tokens"] } });
    const { client, logs } = connect(emu);
    for (let i = 0; i < 6; i++) await client.createToken({ name: `c-${i}` });
    expect(logs.some((l) => /^checking whether API token "c-\d" was created despite HTTP 50[023]$/.test(l))).toBe(true);
    expect(logs.some((l) => /^no API token named "c-\d" appeared within 3(\.\d)?s; creating it again$/.test(l))).toBe(true);
    expect(
      emu
        .tokens()
        .map((t) => t.name)
        .sort(),
    ).toEqual(["c-0", "c-1", "c-2", "c-3", "c-4", "c-5"]);
  });

  it("HTML 502 from a proxy: retried, then reported with the status and a snippet", async () => {
    const emu = await emulator({ faults: { htmlErrorRate: 1 } });
    const { client } = connect(emu, { retry: { maxAttempts: 3 } });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("server");
    expect(e.httpStatus).toBe(502);
    expect(e.message).toMatch(
      /HTTP 502 from POST \/authenticate\/login with a non-JSON body \(text\/html\): "502 Bad Gateway 502 Bad Gateway nginx"/,
    );
    expect(emu.stats().requests).toBe(3);
  });

  it("429 with Retry-After: waits what the server asks", async () => {
    const emu = await emulator({ faults: { rateLimitEvery: 2, retryAfterSeconds: 2 } });
    const { client, sleeps, logs } = connect(emu);
    for (let i = 0; i < 4; i++) await client.listFlavors();
    // The retries wait what the server asks; the pace learnt from the refusal waits at most its window (1,050 ms).
    expect(sleeps).toContain(2000);
    expect(sleeps.every((ms) => ms === 2000 || ms <= 1050)).toBe(true);
    expect(logs.some((l) => /after HTTP 429 \(attempt 2, waiting 2s\)/.test(l))).toBe(true);
  });

  it("429 whose Retry-After exceeds the time budget fails fast with kind timeout", async () => {
    const emu = await emulator({ faults: { rateLimitEvery: 1, retryAfterSeconds: 600 } });
    const { client, sleeps } = connect(emu, { totalTimeoutMs: 5000 });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("timeout");
    expect(e.message).toMatch(/the server asked to wait 600s/);
    expect(sleeps).toEqual([]);
  });

  it("dropped connections: reads and creates succeed without duplicates", async () => {
    const emu = await emulator({ faults: { dropConnectionRate: 0.3, seed: 3 } });
    const { client, logs } = connect(emu, { retry: { maxAttempts: 10 } });
    for (let i = 0; i < 5; i++) await client.listTokens();
    for (let i = 0; i < 5; i++) await client.createToken({ name: `d-${i}` });
    expect(
      logs.some((l) => /after a (reset connection \(ECONNRESET\)|connection closed by the other side \(UND_ERR_SOCKET\))/.test(l)),
    ).toBe(true);
    expect(
      emu
        .tokens()
        .map((t) => t.name)
        .sort(),
    ).toEqual(["d-0", "d-1", "d-2", "d-3", "d-4"]);
  });

  it("lost create response: the token is adopted, not created twice", async () => {
    const emu = await emulator({ faults: { loseCreateResponses: 1 } });
    emu.addToken({ name: "unrelated" });
    const { client, logs } = connect(emu);
    const token = await client.createToken({ name: "lost", description: "d" });
    const named = emu.tokens().filter((t) => t.name === "lost");
    expect(named).toHaveLength(1);
    expect(token).toMatchObject({ id: named[0]!.id, token: named[0]!.token, description: "d" });
    expect(emu.stats().byRoute["POST /api-tokens"]).toBe(1);
    expect(emu.stats().tokenWrites).toBe(1);
    expect(logs.some((l) => /adopted API token "lost"/.test(l))).toBe(true);
  });

  it("lost create responses on every attempt: still exactly one token", async () => {
    const emu = await emulator({ faults: { loseCreateResponses: 1, dropConnectionRate: 0.2, seed: 11, paths: ["/api-tokens"] } });
    const { client } = connect(emu, { retry: { maxAttempts: 10 } });
    await client.createToken({ name: "once" });
    expect(emu.tokens().filter((t) => t.name === "once")).toHaveLength(1);
  });
});

describe("pagination", () => {
  async function withTokens(count: number, options: EmulatorOptions = {}): Promise<RunningEmulator> {
    const emu = await emulator(options);
    for (let i = 0; i < count; i++) emu.addToken({ name: `tok-${String(i).padStart(3, "0")}`, createdAt: 1_700_000_000 + i });
    return emu;
  }

  it("walks > 250 tokens with the default page size", async () => {
    const emu = await withTokens(263);
    const { client } = connect(emu);
    const all = await listAllTokens(client);
    expect(all).toHaveLength(263);
    expect(all.map((t) => t.name)).toEqual(emu.tokens().map((t) => t.name));
    expect(emu.stats().byRoute["GET /api-tokens"]).toBe(3);
    // the server's own default page applies when no limit is sent
    expect((await client.listTokens()).tokens).toHaveLength(10);
  });

  it("walks > 250 tokens when the server clamps the page size", async () => {
    const emu = await withTokens(257, { maxPageSize: 25, defaultPageSize: 7 });
    const { client } = connect(emu);
    const all = await listAllTokens(client, { pageSize: 100 });
    expect(new Set(all.map((t) => t.id)).size).toBe(257);
    expect(emu.stats().byRoute["GET /api-tokens"]).toBe(11);
  });

  it("walks in descending order by name too", async () => {
    const emu = await withTokens(30, { maxPageSize: 8 });
    const { client } = connect(emu, { credentials: { apiToken: emu.tokens()[0]!.token } });
    const all = await listAllTokens(client, { sortField: "name", sortOrder: "desc", pageSize: 8 });
    expect(all.map((t) => t.name)).toEqual(
      emu
        .tokens()
        .map((t) => t.name)
        .sort()
        .reverse(),
    );
  });

  it("walks under faults", async () => {
    const emu = await withTokens(120, { faults: { serverErrorRate: 0.3, dropConnectionRate: 0.1, seed: 5 } });
    const { client } = connect(emu, { retry: { maxAttempts: 10 } });
    expect(await listAllTokens(client, { pageSize: 50 })).toHaveLength(120);
  });
});

describe("walks against the emulator", () => {
  it("a walk of 1,020 tokens in pages of 50: 21 requests, the pages after the first side by side", async () => {
    const emu = await emulator({ maxPageSize: 50, latencyMs: 40 });
    for (let i = 0; i < 1020; i++) emu.addToken({ name: `t${i}`, createdAt: 1_000 + i });
    const { client } = connect(emu, { connections: 8 }); // as the scripts have it
    await client.login();
    emu.resetStats();
    const all = await client.listAllTokens();
    expect(all.map((t) => t.name)).toEqual(Array.from({ length: 1020 }, (_, i) => `t${i}`));
    expect(emu.stats().byRoute["GET /api-tokens"]).toBe(21);
    // Pages in flight side by side, each on a connection of its own.
    expect(emu.stats().connections).toBeGreaterThan(1);
    expect(emu.stats().connections).toBeLessThanOrEqual(8);
  });

  it("listTokensSince reads the newest pages only", async () => {
    const emu = await emulator({ maxPageSize: 50 });
    const seeded = Array.from({ length: 300 }, (_, i) => emu.addToken({ name: `t${i}`, createdAt: 1_000 + i }));
    const { client } = connect(emu);
    await client.login();
    emu.resetStats();
    const newest = await client.listTokensSince({ createdAt: 1_240, ids: [seeded[240]!.id] });
    expect(newest?.map((t) => t.name)).toEqual(Array.from({ length: 60 }, (_, i) => `t${299 - i}`));
    expect(emu.stats().byRoute["GET /api-tokens"]).toBe(2);
  });
});
