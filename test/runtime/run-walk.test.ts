/**
 * The run's walk: the create halves of one apply walk the account's token list once, then ask only
 * for what appeared since, newest first, right before each decides; their own writes are recorded;
 * where the server does not sort, each falls back to a walk of its own. Never a token value in the file.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { ApiClient } from "../../src/client/client";
import { openNodeHttpSender } from "../../src/client/node-http-sender";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { EmulatorFaults } from "../../src/emulator/types";
import type { RunTicket } from "../../src/protocol";
import { randomHex } from "../../src/runtime/io/crypto";
import type { TokenView } from "../../src/runtime/names/token-list";
import { type LatestTokens, tokensSinceRunWalk, withLatestTokens } from "../../src/runtime/run/run-walk";
import type { RuntimeContext } from "../../src/shared/context";
import { createOutput, Redactor } from "../../src/shared/output";
import { runParentIn } from "../support/run-folders";

const USER = { username: "walk-bot", password: "walk-password-3b1e" };
const ACCOUNT = { envPrefix: "GPUCLOUD_", apiUrl: "http://api.test", identity: `user ${USER.username}` };

describe("the run's walk of the token list", () => {
  const servers: RunningEmulator[] = [];
  afterAll(async () => Promise.all(servers.map((s) => s.close())));
  const server = async (
    faults: EmulatorFaults = {},
    seed = (s: RunningEmulator) => {
      for (let i = 0; i < 45; i++) s.addToken({ name: `other-${i}`, createdAt: 1_700_000_000 + i });
    },
    now?: () => number,
  ): Promise<RunningEmulator> => {
    // Pages of at most 10: a walk of 45 tokens takes several requests.
    const s = await startServer(faults, now);
    seed(s);
    return s;
  };
  const startServer = async (faults: EmulatorFaults, now?: () => number) => {
    const s = await startEmulator({ users: [USER], faults: { maxPageSize: 10, ...faults }, now });
    servers.push(s);
    return s;
  };
  /** One run: a temp folder of its own and a ticket. */
  const newRun = () => ({ tmp: mkdtempSync(path.join(tmpdir(), "run-walk-")), ticket: { id: randomHex(16) } as RunTicket | undefined });
  type Run = ReturnType<typeof newRun>;
  const ctx = (run: Run): RuntimeContext => ({
    cwd: run.tmp,
    env: { TMPDIR: run.tmp },
    out: createOutput(() => undefined, new Redactor([])),
    ticket: run.ticket,
  });
  const withClient = async <T>(api: RunningEmulator, fn: (c: ApiClient) => Promise<T>): Promise<T> => {
    const c = new ApiClient(
      { baseUrl: api.url, credentials: { username: USER.username, password: USER.password }, totalTimeoutMs: 10_000 },
      openNodeHttpSender,
    );
    try {
      return await fn(c);
    } finally {
      await c.close();
    }
  };
  /** One create half's look, and its write (if any), as withLatestTokens runs them. */
  const look = (
    c: ApiClient,
    run: Run,
    write: (latest: LatestTokens) => Promise<TokenView | undefined> = async () => undefined,
    account = ACCOUNT,
  ): Promise<LatestTokens> => withLatestTokens(ctx(run), c, account, async (latest) => ({ result: latest, wrote: await write(latest) }));
  const lists = (api: RunningEmulator) => api.stats().byRoute["GET /api-tokens"] ?? 0;

  test("one walk for the run; then one newest-first request each, which sees what appeared since", async () => {
    const api = await server();
    const run = newRun();
    api.resetStats();
    const { tokens: first } = await withClient(api, (c) => look(c, run));
    expect(first).toHaveLength(45);
    const walkRequests = lists(api);
    expect(walkRequests).toBeGreaterThanOrEqual(5);

    const late = api.addToken({ name: "late" });
    api.resetStats();
    const { tokens: second } = await withClient(api, (c) => look(c, run));
    expect(lists(api)).toBe(1);
    expect(second.map((t) => t.name).sort()).toEqual([...first.map((t) => t.name), "late"].sort());
    // The new token comes from the API, with its value; walked ones carry none.
    expect(second.find((t) => t.id === late.id)?.token).toBe(late.token);
    expect(second.find((t) => t.name === "other-0")?.token).toBe("");

    // Nothing of any token's value in the run's file.
    const folder = path.join(runParentIn(run.tmp), run.ticket!.id);
    const [file] = readdirSync(folder).filter((f) => f.endsWith(".walk.json"));
    const text = readFileSync(path.join(folder, file), "utf8");
    for (const t of api.tokens()) expect(text).not.toContain(t.token);
  });

  test("a write recorded by one provisioner is what the next one sees (a rename changes no creation time)", async () => {
    const api = await server();
    const run = newRun();
    const [target] = (await withClient(api, (c) => look(c, run))).tokens;
    await withClient(api, (c) => look(c, run, () => c.updateToken(target.id, { name: "renamed-by-p1" })));
    const { tokens: seen } = await withClient(api, (c) => look(c, run));
    expect(seen.find((t) => t.id === target.id)?.name).toBe("renamed-by-p1");
  });

  test("a token another party created after the walk is seen, even after this run recorded a newer write of its own", async () => {
    const api = await server();
    const run = newRun();
    await withClient(api, (c) => look(c, run));
    const others = api.addToken({ name: "theirs", createdAt: 1_800_000_000 });
    // This run's own create, newer than theirs: recorded, it must not move what "since" means.
    const mine = await withClient(api, (c) =>
      look(c, run, async () => ({ ...(await c.createToken({ name: "mine" })), created_at: 1_900_000_000 })),
    ).then(() => api.tokens().find((t) => t.name === "mine")!);
    const { tokens } = await withClient(api, (c) => look(c, run));
    expect(tokens.map((t) => t.id)).toEqual(expect.arrayContaining([others.id, mine.id]));
  });

  test.each([
    ["ignores", { ignoreSortParams: true }],
    ["refuses", { rejectSortParams: true }],
  ] as const)("a server that %s the sort: each provisioner walks, and sees everything", async (_how, opts) => {
    const api = await server(opts);
    const run = newRun();
    await withClient(api, (c) => look(c, run));
    api.addToken({ name: "late" });
    const { tokens: seen } = await withClient(api, (c) => look(c, run));
    expect(seen.map((t) => t.name)).toContain("late");
    expect(seen).toHaveLength(46);
  });

  test.each([
    ["another run (a retry of a failed one, another workspace: another ticket)", "run", {}],
    ["another credential (same ticket)", "same", { identity: "user someone-else" }],
    ["another API address (same ticket)", "same", { apiUrl: "http://other.test" }],
  ] as const)("%s never takes this run's walk", async (_who, which, account) => {
    const api = await server();
    const run = newRun();
    const { tokens: walked } = await withClient(api, (c) => look(c, run));
    // Renamed after this run's walk: only a walk of its own sees it.
    const renamed = await withClient(api, (c) => c.updateToken(walked[0].id, { name: "renamed-since" }));
    api.resetStats();
    const other = which === "run" ? { ...run, ticket: { id: randomHex(16) } } : run;
    const { tokens: seen } = await withClient(api, (c) => look(c, other, undefined, { ...ACCOUNT, ...account }));
    expect(lists(api)).toBeGreaterThanOrEqual(5);
    expect(seen.find((t) => t.id === renamed.id)?.name).toBe("renamed-since");
    // This run's own next look still takes its walk: one request.
    api.resetStats();
    await withClient(api, (c) => look(c, run));
    expect(lists(api)).toBe(1);
  });

  test("outside a run (no ticket): a walk of its own each time, nothing written", async () => {
    const api = await server();
    const run = { ...newRun(), ticket: undefined };
    await withClient(api, (c) => look(c, run));
    api.resetStats();
    await withClient(api, (c) => look(c, run));
    expect(lists(api)).toBeGreaterThanOrEqual(5);
    expect(readdirSync(run.tmp)).toEqual([]);
  });

  describe("the mark moves forward with each newest-first read (each create costs the same few list calls)", () => {
    /** An API whose clock the test moves: one second per create, so that creation times differ. */
    const clocked = async () => {
      let clock = 1_800_000_000_000;
      const api = await server({}, undefined, () => clock);
      return { api, tick: () => (clock += 1000) };
    };

    test("thirty creates, each recorded, each followed by a look: one list call per look, however many came before", async () => {
      const { api, tick } = await clocked();
      const run = newRun();
      await withClient(api, (c) => look(c, run));
      api.resetStats();
      await withClient(api, async (c) => {
        for (let i = 0; i < 30; i++) {
          tick();
          const { tokens } = await look(c, run, () => c.createToken({ name: `mine-${i}` }));
          expect(tokens).toHaveLength(45 + i);
        }
      });
      // From one fixed mark, the 30th look would read 30 new tokens: 4 pages of 10.
      expect(lists(api)).toBe(30);
    });

    test("the read after the writes reads from the oldest token it needs, so it gets each one's value", async () => {
      const { api, tick } = await clocked();
      const run = newRun();
      await withClient(api, (c) => look(c, run));
      const created = await withClient(api, async (c) => {
        const made: TokenView[] = [];
        for (let i = 0; i < 30; i++) {
          tick();
          await look(c, run, async () => {
            const token = await c.createToken({ name: `mine-${i}` });
            made.push(token);
            return token;
          });
        }
        return made;
      });
      const named = (names: string[]) => (tokens: readonly TokenView[]) => tokens.filter((t) => names.includes(t.name));
      for (const [names, calls] of [
        [["mine-29", "mine-28"], 1],
        [["mine-3", "mine-29"], 3], // 27 tokens from mine-3 on, pages of 10 overlapping by one
      ] as const) {
        api.resetStats();
        const seen = await withClient(api, (c) => tokensSinceRunWalk(ctx(run), c, ACCOUNT, named([...names])));
        expect(lists(api)).toBe(calls);
        for (const name of names) expect(seen?.find((t) => t.name === name)?.token).toBe(created.find((t) => t.name === name)!.token);
      }
    });

    test("a token created in the mark's second after the mark moved is still seen (ties are read again)", async () => {
      const { api, tick } = await clocked();
      const run = newRun();
      await withClient(api, (c) => look(c, run));
      tick();
      api.addToken({ name: "first" });
      expect((await withClient(api, (c) => look(c, run))).tokens.map((t) => t.name)).toContain("first");
      api.addToken({ name: "same-second" }); // the clock did not move: created_at equals the new mark
      const { tokens } = await withClient(api, (c) => look(c, run));
      expect(tokens.map((t) => t.name)).toEqual(expect.arrayContaining(["first", "same-second"]));
    });
  });

  test("the token at the mark revoked meanwhile: no proof of order, so a full walk, which sees what is new", async () => {
    const api = await server();
    const run = newRun();
    const { tokens } = await withClient(api, (c) => look(c, run));
    const newest = tokens.find((t) => t.name === "other-44")!;
    api.deleteToken(newest.id);
    api.addToken({ name: "late" });
    api.resetStats();
    const { tokens: seen } = await withClient(api, (c) => look(c, run));
    expect(seen.map((t) => t.name)).toContain("late");
    expect(lists(api)).toBeGreaterThanOrEqual(5);
  });

  test("a server that ignores the sort, listing oldest first, on an account of old tokens sharing one created_at: new tokens are seen", async () => {
    const api = await server({ ignoreSortParams: true }, (s) => {
      s.addTokens({ name: "migrated", createdAt: 1_600_000_000, count: 60 });
      for (let i = 0; i < 5; i++) s.addToken({ name: `other-${i}`, createdAt: 1_700_000_000 + i });
    });
    const run = newRun();
    await withClient(api, (c) => look(c, run));
    const late = [api.addToken({ name: "late-1" }), api.addToken({ name: "late-2" })];
    const { tokens } = await withClient(api, (c) => look(c, run));
    expect(tokens.map((t) => t.id)).toEqual(expect.arrayContaining(late.map((t) => t.id)));
    expect(tokens).toHaveLength(67);
  });
});
