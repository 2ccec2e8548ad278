/**
 * The token writer in-process against the emulator: what it decides per token (a rename of the
 * plan's id, an adoption by name, a create in waves), what it does after a fault (every other token
 * written, the failed ones named) and how many requests and logins it takes.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { encodeRunTicket, WriterEnv, type WriterInputs, type WriterPlanned } from "../../src/protocol";
import { accountFingerprint, accountRefIn, ledgerAccountOf } from "../../src/runtime/account-identity";
import { TokenIndex } from "../../src/runtime/names/token-index";
import { writeTokens } from "../../src/runtime/writer/token-writer";
import { decideWrite } from "../../src/runtime/writer/write-decision";
import { createOutput, Redactor } from "../../src/shared/output";

const USER = { username: "writer-bot", password: "writer-password-7d1e" };

interface Wanted {
  readonly path: string;
  readonly name: string;
  readonly description?: string;
  readonly plannedId?: string;
  readonly previousNames?: readonly string[];
}

describe("token writer", () => {
  let emulator: RunningEmulator;
  const folders: string[] = [];
  beforeAll(async () => {
    emulator = await startEmulator({ users: [USER], maxPageSize: 50 });
  });
  afterAll(async () => {
    await emulator?.close();
    for (const f of folders) rmSync(f, { recursive: true, force: true });
  });
  beforeEach(() => emulator.setFaults({}));

  const baseEnv = (): NodeJS.ProcessEnv => ({
    GPUCLOUD_BASE_URL: emulator.url,
    GPUCLOUD_USERNAME: USER.username,
    GPUCLOUD_PASSWORD: USER.password,
    GPUCLOUD_TIMEOUT_SECONDS: "20",
  });

  /** One writer run over `tokens`, as its provisioner starts it; resolves to its log (one line per entry). */
  const write = async (
    tokens: readonly Wanted[],
    opts: { env?: NodeJS.ProcessEnv; stop?: AbortSignal; planEnv?: NodeJS.ProcessEnv } = {},
  ): Promise<string[]> => {
    const cwd = mkdtempSync(path.join(tmpdir(), "token-writer-"));
    folders.push(cwd);
    const inputs: WriterInputs = { v: 1, tokens: Object.fromEntries(tokens.map((t) => [t.path, [t.name, t.description ?? null]])) };
    writeFileSync(path.join(cwd, "inputs.json"), JSON.stringify(inputs));
    const planned: WriterPlanned = Object.fromEntries(
      tokens.map((t) => [t.path, { i: t.plannedId ?? "", ...(t.previousNames ? { p: t.previousNames } : {}) }]),
    );
    const lines: string[] = [];
    const env = { ...baseEnv(), ...opts.env };
    const ticket = encodeRunTicket({
      accounts: [accountFingerprint(ledgerAccountOf(accountRefIn(opts.planEnv ?? env, undefined, undefined)))],
    });
    try {
      await writeTokens({
        cwd,
        out: createOutput((t) => lines.push(t.trimEnd()), new Redactor([USER.password])),
        env: {
          ...env,
          [WriterEnv.INPUTS]: "inputs.json",
          [`${WriterEnv.PLANNED_PREFIX}0`]: JSON.stringify(planned),
          [WriterEnv.TICKET]: ticket,
        },
        stop: opts.stop,
      });
    } catch (err) {
      throw Object.assign(err as Error, { log: lines });
    }
    return lines;
  };
  const named = (name: string) => emulator.tokens().filter((t) => t.name === name);

  test("creates what no token has, adopts a name that exists, renames the plan's id: one line each, one login", async () => {
    const existing = emulator.addToken({ name: "w1-adopt", description: "theirs" });
    const old = emulator.addToken({ name: "w1-old" });
    emulator.resetStats();
    const log = await write([
      { path: "s/new", name: "w1-new", description: "d" },
      { path: "s/adopt", name: "w1-adopt" },
      { path: "s/renamed", name: "w1-renamed", plannedId: old.id },
    ]);
    expect(named("w1-new")).toEqual([expect.objectContaining({ description: "d" })]);
    expect(named("w1-adopt")).toEqual([expect.objectContaining({ id: existing.id, description: "theirs" })]);
    expect(named("w1-renamed")).toEqual([expect.objectContaining({ id: old.id, token: old.token })]);
    expect(named("w1-old")).toEqual([]);
    expect(log).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/created API token "w1-new" \(id \S+\) for s\/new$/),
        `gpucloud: adopted existing API token "w1-adopt" (id ${existing.id}) for s/adopt: no change`,
        `gpucloud: API token "w1-old" (id ${old.id}) for s/renamed: renamed "w1-old" to "w1-renamed"`,
        "gpucloud: 3 of 3 tokens written",
      ]),
    );
    expect(emulator.stats().logins).toBe(1);
    expect(emulator.stats().tokenWrites).toBe(2);
  });

  test("names given by expressions that clash are refused, naming each other; a token adopted or created is no other's", async () => {
    const old = emulator.addToken({ name: "w9-old" });
    emulator.addToken({ name: "w9-taken" });
    emulator.resetStats();
    const failure = await write([
      { path: "s/a", name: "w9-same" },
      { path: "s/b", name: "W9-same " },
      { path: "s/c", name: "w9-c", previousNames: ["w9-old"] },
      { path: "s/d", name: "w9-d", previousNames: ["w9-old"] },
      { path: "s/e", name: "w9-e", previousNames: ["w9-taken"] },
      { path: "s/f", name: "w9-taken" },
    ]).catch((err: Error & { log: string[] }) => err);
    expect(failure).toBeInstanceOf(Error);
    const message = (failure as Error).message;
    expect(message).toContain('s/a ("w9-same"): the ApiToken s/b has this name too; give each ApiToken its own names');
    expect(message).toContain('s/b ("W9-same "): the ApiToken s/a has this name too');
    // A previous name that is another token's name: which token is whose would depend on their order.
    expect(message).toContain('s/e ("w9-e"): its previous name "w9-taken" is the name of the ApiToken s/f');
    expect(message).toContain('s/f ("w9-taken"): its name is a previous name of the ApiToken s/e');
    expect(message).toMatch(/^4 of 6 API tokens were not written/);
    expect(named("w9-same")).toEqual([]);
    // s/c renames the token of its previous name; s/d, whose previous name it was too, gets a token of its own.
    expect(named("w9-c")).toEqual([expect.objectContaining({ id: old.id })]);
    expect(named("w9-d")).toEqual([expect.not.objectContaining({ id: old.id })]);
  });

  test("a name another construct's token has is created only once that token's rename away is done", async () => {
    const x = emulator.addToken({ name: "w11-x" });
    emulator.addToken({ name: "w11-y" });
    // s/a renames x onto a name another token has (refused); s/b, new, wants x's name: nothing is created beside x.
    const failure = await write([
      { path: "s/a", name: "w11-y", plannedId: x.id },
      { path: "s/b", name: "w11-x" },
    ]).catch((err: Error) => err);
    expect((failure as Error).message).toContain(`s/b ("w11-x"): API token ${x.id} has this name and is another ApiToken's of this stack`);
    expect(named("w11-x")).toEqual([expect.objectContaining({ id: x.id })]);
    // The rename done, the name is free: s/b gets a token of its own.
    const z = emulator.addToken({ name: "w11-z" });
    await write([
      { path: "s/a", name: "w11-z2", plannedId: z.id },
      { path: "s/b", name: "w11-z" },
    ]);
    expect(named("w11-z2")).toEqual([expect.objectContaining({ id: z.id })]);
    expect(named("w11-z")).toEqual([expect.not.objectContaining({ id: z.id })]);
  });

  test("tokens as configured are not written, nor counted", async () => {
    const same = emulator.addToken({ name: "w2-same", description: "same" });
    emulator.resetStats();
    const log = await write([{ path: "s/same", name: "w2-same", description: "same", plannedId: same.id }]);
    expect(emulator.stats().tokenWrites).toBe(0);
    expect(log.join("\n")).not.toContain("tokens written");
  });

  test("a token the plan found but the API no longer lists is refused; every other token is written", async () => {
    const gone = emulator.addToken({ name: "w3-gone" });
    emulator.deleteToken(gone.id);
    const err = (await write([
      { path: "s/gone", name: "w3-gone", plannedId: gone.id },
      { path: "s/fine", name: "w3-fine" },
    ]).catch((e: unknown) => e)) as Error & { log: string[] };
    expect(err.message).toContain(`1 of 2 API tokens were not written (every other one was)`);
    expect(err.message).toContain(`s/gone ("w3-gone"): the plan showed API token id ${gone.id}`);
    expect(err.message).toContain("run terraform plan again");
    expect(named("w3-fine")).toHaveLength(1);
    expect(named("w3-gone")).toHaveLength(0);
  });

  test("a write the API refuses fails only that token, named with the API's answer; the others are written", async () => {
    emulator.addToken({ name: "w4-update" });
    const tooLong = "x".repeat(5000);
    const err = (await write([
      { path: "s/long", name: "w4-long", description: tooLong },
      { path: "s/update", name: "w4-update", description: "new" },
      { path: "s/created", name: "w4-created" },
    ]).catch((e: unknown) => e)) as Error & { log: string[] };
    expect(err.message).toContain(`1 of 3 API tokens were not written (every other one was):\n  s/long ("w4-long"): `);
    expect(err.message).toContain("The next plan shows each of them");
    expect(named("w4-update")).toEqual([expect.objectContaining({ description: "new" })]);
    expect(named("w4-created")).toHaveLength(1);
    expect(named("w4-long")).toHaveLength(0);
    expect(err.log.join("\n")).not.toContain(USER.password);
  });

  test("names another party creates between waves are adopted, never created twice", async () => {
    const names = Array.from({ length: 45 }, (_, i) => `w5-t${i}`);
    let posts = 0;
    const racer = await startEmulator({
      users: [USER],
      maxPageSize: 50,
      log: (line) => {
        // After the first wave's creates, another party creates two names of later waves.
        if (line.startsWith("POST /api-tokens ") && ++posts === 20) {
          racer.addToken({ name: "w5-t30" });
          racer.addToken({ name: "w5-t44" });
        }
      },
    });
    try {
      const log = await write(
        names.map((name) => ({ path: `s/${name}`, name })),
        { env: { GPUCLOUD_BASE_URL: racer.url } },
      );
      for (const name of names) expect(racer.tokens().filter((t) => t.name === name)).toHaveLength(1);
      expect(log).toEqual(expect.arrayContaining([expect.stringMatching(/adopted existing API token "w5-t30"/)]));
      expect(log.filter((l) => /tokens written; \d+ to create/.test(l))).toEqual([
        "gpucloud: 0 of 45 tokens written; 45 to create",
        "gpucloud: 20 of 45 tokens written; 25 to create",
        "gpucloud: 40 of 45 tokens written; 5 to create",
      ]);
      // One login, one walk, one newest-first read per wave, 43 creates.
      expect(racer.stats().logins).toBe(1);
      expect(racer.stats().byRoute["POST /api-tokens"]).toBe(43);
      expect(racer.stats().byRoute["GET /api-tokens"]).toBeLessThanOrEqual(1 + 3 + 1);
    } finally {
      await racer.close();
    }
  });

  test("stopped (SIGINT, SIGTERM, EPIPE): no further wave; the tokens not reached are named", async () => {
    const stop = new AbortController();
    const names = Array.from({ length: 30 }, (_, i) => `w6-t${i}`);
    let posts = 0;
    const slow = await startEmulator({
      users: [USER],
      log: (line) => {
        if (line.startsWith("POST /api-tokens ") && ++posts === 5) stop.abort();
      },
    });
    try {
      const err = (await write(
        names.map((name) => ({ path: `s/${name}`, name })),
        { env: { GPUCLOUD_BASE_URL: slow.url }, stop: stop.signal },
      ).catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(Error);
      const created = slow.tokens().length;
      expect(created).toBeGreaterThanOrEqual(5);
      expect(created).toBeLessThan(30);
      expect(err.message).toContain(`${30 - created} of 30 API tokens were not written`);
      expect(err.message).toContain("not written, the writer was stopped");
      // The next run converges with one token per name.
      await write(
        names.map((name) => ({ path: `s/${name}`, name })),
        { env: { GPUCLOUD_BASE_URL: slow.url } },
      );
      for (const name of names) expect(slow.tokens().filter((t) => t.name === name)).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });

  test("against a rate limit it does not know (20 requests/s): after the first 429 it keeps to the pace the server accepted", async () => {
    const names = Array.from({ length: 60 }, (_, i) => `w8-t${i}`);
    const limited = await startEmulator({ users: [USER], maxPageSize: 50, rateLimit: { requestsPerSecond: 20 } });
    try {
      for (let i = 0; i < 300; i++) limited.addToken({ name: `w8-other-${i}`, createdAt: 1_700_000_000 + i });
      await write(
        names.map((name) => ({ path: `s/${name}`, name })),
        { env: { GPUCLOUD_BASE_URL: limited.url } },
      );
      for (const name of names) expect(limited.tokens().filter((t) => t.name === name)).toHaveLength(1);
      const { requests, throttled } = limited.stats();
      // Unpaced, every wave of 8 requests in flight ran into the limit again (dozens of refusals).
      expect(throttled).toBeLessThanOrEqual(8);
      expect(requests).toBeLessThanOrEqual(1 + 7 + 3 + 60 + throttled + 2);
    } finally {
      await limited.close();
    }
  }, 30_000);

  test("credentials other than the plan's are refused before anything is written", async () => {
    const other = { username: "writer-other", password: "writer-other-password-1" };
    const two = await startEmulator({ users: [USER, other] });
    try {
      const err = (await write([{ path: "s/x", name: "w7-x" }], {
        env: { GPUCLOUD_BASE_URL: two.url, GPUCLOUD_USERNAME: other.username, GPUCLOUD_PASSWORD: other.password },
        planEnv: { ...baseEnv(), GPUCLOUD_BASE_URL: two.url },
      }).catch((e: unknown) => e)) as Error;
      expect(err.message).toContain("not as the credentials the plan it applies was made with");
      expect(two.stats().tokenWrites).toBe(0);
    } finally {
      await two.close();
    }
  });
});

describe("decideWrite", () => {
  const token = (id: string, name: string, description = "") => ({
    id,
    name,
    description,
    token: `v-${id}`,
    created_at: Number(id.slice(1)),
  });

  test("the plan's id wins over a token of the name; a folded spelling is the name, not a rename", () => {
    const tokens = [token("t1", "ci"), token("t2", "CI ")];
    expect(decideWrite({ path: "p", name: "ci", plannedId: "t2" }, new TokenIndex(tokens))).toEqual({
      kind: "none",
      token: tokens[1],
      adopted: false,
    });
    expect(decideWrite({ path: "p", name: "ci", plannedId: "" }, new TokenIndex(tokens))).toEqual({
      kind: "none",
      token: tokens[0],
      adopted: true,
    });
  });

  test("several tokens whose names fold to the configured one, none exact: refused, ids named", () => {
    const decision = decideWrite({ path: "p", name: "ci", plannedId: "" }, new TokenIndex([token("t1", "CI"), token("t2", " ci")]));
    expect(decision).toEqual({ kind: "refuse", reason: expect.stringContaining("ids t1, t2") });
  });

  test("a managed description that differs is an update; an unmanaged one never is", () => {
    const tokens = [token("t1", "ci", "old")];
    expect(decideWrite({ path: "p", name: "ci", description: "new", plannedId: "t1" }, new TokenIndex(tokens))).toMatchObject({
      kind: "update",
      changes: ["updated the description"],
    });
    expect(decideWrite({ path: "p", name: "ci", plannedId: "t1" }, new TokenIndex(tokens))).toMatchObject({ kind: "none" });
  });

  test("only another construct's (claimed) token has the name: held, decided again after the updates", () => {
    const tokens = [token("t1", "ci")];
    expect(decideWrite({ path: "p", name: "ci", plannedId: "" }, new TokenIndex(tokens), new Set(["t1"]))).toEqual({
      kind: "held",
      token: tokens[0],
    });
  });

  test("no token of the name and no planned id: a create", () => {
    expect(decideWrite({ path: "p", name: "new", plannedId: "" }, new TokenIndex([token("t1", "ci")]))).toEqual({ kind: "create" });
  });

  test("previous names (a token whose names are expressions): the first that names an unclaimed token is renamed; else a create", () => {
    const tokens = new TokenIndex([token("t1", "older"), token("t2", "old")]);
    const wanted = { path: "p", name: "new", plannedId: "", previousNames: ["gone", "old", "older"] };
    expect(decideWrite(wanted, tokens)).toMatchObject({
      kind: "update",
      token: { id: "t2" },
      adopted: true,
      changes: ['renamed "old" to "new"'],
    });
    expect(decideWrite(wanted, tokens, new Set(["t2"]))).toMatchObject({ kind: "update", token: { id: "t1" } });
    expect(decideWrite(wanted, tokens, new Set(["t1", "t2"]))).toEqual({ kind: "create" });
    // The name itself comes first.
    expect(decideWrite({ ...wanted, name: "older" }, tokens)).toMatchObject({ kind: "none", token: { id: "t1" } });
  });
});

describe("decideWrite: a rename onto a name another token has", () => {
  const token = (id: string, name: string) => ({ id, name, description: "", token: `v-${id}`, created_at: 1 });

  test("is refused, naming both tokens: two tokens of one name would follow", () => {
    const tokens = [token("t1", "old"), token("t2", "new")];
    expect(decideWrite({ path: "p", name: "new", plannedId: "t1" }, new TokenIndex(tokens))).toEqual({
      kind: "refuse",
      reason: expect.stringContaining(`cannot rename API token t1 ("old") to "new": API token t2 already has that name`),
    });
    // Another spelling of its own name is no rename.
    expect(decideWrite({ path: "p", name: "OLD", plannedId: "t1" }, new TokenIndex(tokens))).toMatchObject({ kind: "none" });
  });
});

describe("TokenIndex", () => {
  test("finds by id and by folded name; a token written again moves to its new name", () => {
    const index = new TokenIndex([
      { id: "t1", name: "CI ", token: "", created_at: 1 },
      { id: "t2", name: "other", token: "", created_at: 2 },
    ]);
    expect(index.foldedAs("ci").map((t) => t.id)).toEqual(["t1"]);
    index.put({ id: "t1", name: "renamed", token: "", created_at: 1 });
    expect(index.foldedAs("ci")).toEqual([]);
    expect(index.foldedAs("RENAMED").map((t) => t.id)).toEqual(["t1"]);
    expect(index.byId("t1")?.name).toBe("renamed");
    // A name the API holds decomposed (e + U+0301) is the NFC one the plan has (Terraform keeps strings in NFC).
    index.put({ id: "t3", name: "cafe\u0301", token: "", created_at: 3 });
    expect(index.foldedAs("caf\u00e9").map((t) => t.id)).toEqual(["t3"]);
    expect(
      index
        .all()
        .map((t) => t.id)
        .sort(),
    ).toEqual(["t1", "t2", "t3"]);
  });
});
