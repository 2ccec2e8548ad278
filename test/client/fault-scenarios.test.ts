/**
 * The client against the emulator under the faults of issue 7: a steady 5xx rate with more than
 * one page of tokens, parallel runs, a create that commits after a 504, a deletion during a walk,
 * refused sort parameters, errors on HTTP 200, page-size edges and one budget per run.
 */
import type { GpuCloudClient, GpuCloudClientOptions } from "../../src/client";
import { listAllTokens } from "../../src/client";
import type { EmulatorOptions, RunningEmulator } from "../../src/emulator";
import { startEmulator } from "../../src/emulator";
import type { RuntimeContext } from "../../src/shared/context";
import { withClient } from "../../src/shared/context";
import { createOutput, Redactor } from "../../src/shared/output";
import type { Harness } from "./helpers";
import { caught, closeAfterEach, newClient, recordingClient, track } from "./helpers";

closeAfterEach();

async function emulator(tokens: number, options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const emu = track(await startEmulator({ maxPageSize: 50, ...options }));
  for (let i = 0; i < tokens; i++) emu.addToken({ name: `old-${String(i).padStart(3, "0")}`, createdAt: 1_700_000_000 + i });
  return emu;
}

function connect(emu: RunningEmulator, options: Partial<GpuCloudClientOptions> = {}): Harness {
  return recordingClient({
    baseUrl: emu.url,
    credentials: { username: "demo", password: "demo-password" },
    requestTimeoutMs: 3000,
    ...options,
  });
}

/** What the token-apply script does: list everything, create only when the name is free. */
async function ensureToken(client: GpuCloudClient, name: string): Promise<void> {
  const all = await listAllTokens(client);
  if (!all.some((t) => t.name === name)) await client.createToken({ name });
}

const named = (emu: RunningEmulator, name: string) => emu.tokens().filter((t) => t.name === name);

describe("a 502 on every 3rd request", () => {
  it("60 tokens (two pages): the create succeeds, exactly one token", async () => {
    const ambiguous: boolean[] = [];
    for (let shift = 0; shift < 3; shift++) {
      // every phase of the fault sequence: the POST lands on a failing request in one of them
      const emu = await emulator(60, { faults: { serverErrorEvery: 3 } });
      for (let i = 0; i < shift; i++) await fetch(`${emu.url}/flavors`);
      const { client, logs } = connect(emu);
      await ensureToken(client, "ci");
      expect(named(emu, "ci")).toHaveLength(1);
      expect(emu.tokens()).toHaveLength(61);
      expect(logs.some((l) => /^retrying .* after HTTP 502/.test(l))).toBe(true);
      ambiguous.push(logs.includes('checking whether API token "ci" was created despite HTTP 502'));
    }
    expect(ambiguous).toContain(true); // in some phase the POST itself got the 502
  });

  it("three runs in parallel on one account each create their token exactly once", async () => {
    const emu = await emulator(60, { faults: { serverErrorEvery: 3 } });
    const runs = ["a", "b", "c"].map((name) => ensureToken(connect(emu).client, name));
    await Promise.all(runs);
    for (const name of ["a", "b", "c"]) expect(named(emu, name)).toHaveLength(1);
    expect(emu.tokens()).toHaveLength(63);
  });

  it("the same with errors sent as HTTP 200 with status false", async () => {
    const emu = await emulator(60, { faults: { serverErrorEvery: 3, errorsAsHttp200: true } });
    const { client, logs } = connect(emu);
    await ensureToken(client, "ci");
    expect(named(emu, "ci")).toHaveLength(1);
    expect(logs.some((l) => /^retrying .* after status false \(HTTP 200\)/.test(l))).toBe(true);
  });
});

describe("errors on HTTP 200, sort refused, a 502 on every 3rd request, all at once", () => {
  it("login, walk and create all get through, in every phase of the fault sequence", async () => {
    for (let phase = 0; phase < 3; phase++) {
      const emu = await emulator(60, { faults: { serverErrorEvery: 3, errorsAsHttp200: true, rejectSortParams: true } });
      for (let i = 0; i < phase; i++) await fetch(`${emu.url}/flavors`);
      const { client, logs } = connect(emu);
      await ensureToken(client, "ci");
      expect(named(emu, "ci")).toHaveLength(1);
      expect(logs.filter((l) => /refused sortField/.test(l))).toHaveLength(1);
    }
  });
});

describe("a create that commits 3 s after the gateway answered 504", () => {
  it("is adopted, not created twice (real time)", async () => {
    const emu = await emulator(120, { faults: { gatewayTimeoutCreates: 1, createCommitDelayMs: 3000 } });
    const logs: string[] = [];
    const client = track(
      newClient({ baseUrl: emu.url, credentials: { username: "demo", password: "demo-password" }, logger: (l) => logs.push(l) }),
    );
    const started = Date.now();
    const token = await client.createToken({ name: "late" });
    const elapsed = Date.now() - started;
    expect(named(emu, "late")).toHaveLength(1);
    expect(token.id).toBe(named(emu, "late")[0]!.id);
    expect(emu.stats().byRoute["POST /api-tokens"]).toBe(1);
    expect(elapsed).toBeGreaterThanOrEqual(3000);
    expect(elapsed).toBeLessThan(9000);
    expect(logs).toContain('checking whether API token "late" was created despite HTTP 504');
    expect(logs.some((l) => /^adopted API token "late" \(id tok_[0-9a-f]+\)/.test(l))).toBe(true);
    // cheap look-ups: the newest page, not a walk over all pages
    expect(emu.stats().byRoute["GET /api-tokens"]).toBeLessThanOrEqual(4);
  });

  it("when the look-ups cannot finish within the budget: fails saying the next apply adopts the token", async () => {
    // every request to /api-tokens fails with 502: neither the create nor a look-up gets through
    const emu = await emulator(0, { faults: { serverErrorEvery: 1, paths: ["/api-tokens"] } });
    const { client } = connect(emu, { totalTimeoutMs: 10_000 });
    const e = await caught(client.createToken({ name: "x" }));
    expect(e.outcomeUnknown).toBe(true);
    expect(e.message).toMatch(
      /whether the token "x" was created could not be established .* The next apply adopts a token of that name if it exists instead of creating another$/,
    );
  });
});

describe("pagination under change and refusal", () => {
  it("250 tokens, one deleted during the walk: no live token missing", async () => {
    const emu = await emulator(250, { faults: { deleteOnListRequest: 3 } });
    const { client, logs } = connect(emu);
    const all = await listAllTokens(client);
    const live = emu.tokens();
    expect(live).toHaveLength(249);
    expect(all.map((t) => t.id)).toEqual(live.map((t) => t.id));
    expect(logs.filter((l) => /reading the list again \(walk 2\/6\)$/.test(l))).toHaveLength(1);
  });

  it("sortField refused: falls back with one log line, results complete and correct", async () => {
    const emu = await emulator(70, { faults: { rejectSortParams: true } });
    const { client, logs } = connect(emu);
    const first = await listAllTokens(client);
    const second = await listAllTokens(client);
    expect(new Set(first.map((t) => t.id))).toEqual(new Set(emu.tokens().map((t) => t.id)));
    expect(second).toHaveLength(70);
    expect(logs.filter((l) => /sortField/.test(l))).toEqual([
      "GET /api-tokens: the server refused sortField/sortOrder (HTTP 400: unknown query parameter: sortField and sortOrder are not supported); listing in the server's own order from now on",
    ]);
    // a create after an ambiguous failure still finds its token without the newest-page shortcut
    emu.setFaults({ rejectSortParams: true, loseCreateResponses: 1 });
    await client.createToken({ name: "ci" });
    expect(named(emu, "ci")).toHaveLength(1);
  });

  it("sort refused: the look-up after an ambiguous create does not ask for the first page again", async () => {
    const emu = await emulator(5, { faults: { rejectSortParams: true, loseCreateResponses: 1 } });
    const { client, logs } = connect(emu);
    await client.login();
    emu.resetStats();
    const created = await client.createToken({ name: "ci" });
    expect(named(emu, "ci")).toEqual([expect.objectContaining({ id: created.id })]);
    expect(logs.some((l) => /refused sortField\/sortOrder/.test(l))).toBe(true);
    // The look-up asks for the newest page, is refused, and asks again without the sort: that
    // answer is the server's own first page (here the whole list), so nothing more is asked.
    expect(emu.stats().byRoute).toEqual({ "POST /api-tokens": 1, "GET /api-tokens": 2 });
  });

  it("sort and limit ignored: the walk still sees every token", async () => {
    const emu = await emulator(35, { faults: { ignoreSortParams: true, ignoreLimit: true } });
    const { client } = connect(emu);
    expect(new Set((await listAllTokens(client)).map((t) => t.id)).size).toBe(35);
  });

  it("a count that is a multiple of the page size costs no extra request", async () => {
    const emu = await emulator(50);
    const { client } = connect(emu);
    expect(await listAllTokens(client, { pageSize: 50 })).toHaveLength(50);
    expect(emu.stats().byRoute["GET /api-tokens"]).toBe(1);
    emu.resetStats();
    const empty = await emulator(0);
    expect(await listAllTokens(connect(empty).client)).toEqual([]);
    expect(empty.stats().byRoute["GET /api-tokens"]).toBe(1);
  });
});

describe("one budget per run", () => {
  function context(env: NodeJS.ProcessEnv, lines: string[]): RuntimeContext {
    return { env, cwd: process.cwd(), out: createOutput((t) => lines.push(t), new Redactor([])) };
  }

  it("is shared by every request and every client of the run", async () => {
    const emu = await emulator(0, { faults: { latencyMs: 300 } });
    const lines: string[] = [];
    const ctx = context(
      { GPUCLOUD_BASE_URL: emu.url, GPUCLOUD_USERNAME: "demo", GPUCLOUD_PASSWORD: "demo-password", GPUCLOUD_TIMEOUT_SECONDS: "1" },
      lines,
    );
    const started = Date.now();
    // each call alone fits in 1 s; together they do not
    await withClient(ctx, undefined, (client) => client.listFlavors());
    const e = await caught(
      withClient(ctx, `${emu.url}/`, async (client) => {
        for (let i = 0; i < 5; i++) await client.listFlavors();
      }),
    );
    expect(e.kind).toBe("timeout");
    expect(e.message).toMatch(/^list flavors \(GET \/flavors\): .*the time budget of 1s (is used up|leaves no room for another attempt)/);
    expect(Date.now() - started).toBeLessThan(2500); // 1 s budget, plus slack for a loaded machine
    // a new run gets a new budget
    await withClient(context(ctx.env, lines), undefined, (client) => client.listFlavors());
  });

  it("clients given one deadline share it", async () => {
    const emu = await emulator(0, { faults: { latencyMs: 200 } });
    const deadline = Date.now() + 700;
    const options = { baseUrl: emu.url, credentials: { username: "demo", password: "demo-password" }, deadline };
    const a = track(newClient(options));
    const b = track(newClient(options));
    await a.listFlavors(); // login + GET: about 400 ms
    const e = await caught(
      (async () => {
        await b.listFlavors();
        await b.listFlavors();
      })(),
    );
    expect(e.kind).toBe("timeout");
    expect(Date.now()).toBeLessThan(deadline + 1000);
  });
});
