/**
 * The token provisioner commands in-process against the emulator, with the terraform run pinned,
 * so that each rule of the hand-off is tested on its own: which hand-off is followed, which is
 * dropped with a warning, and previousNames.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";

import { ApiClient } from "../../src/client/client";
import { openNodeHttpSender } from "../../src/client/node-http-sender";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { encodeRunTicket, PLANNED_ENV } from "../../src/protocol";
import { accountDigest } from "../../src/runtime/account-identity";
import { MIN_LEASE_MS } from "../../src/runtime/locks/lock-bounds";
import { nameLockPath } from "../../src/runtime/locks/name-lock";
import { stackRead } from "../../src/runtime/reads/stack-read";
import { readAppliedRecord, writeAppliedRecord } from "../../src/runtime/records/applied-record";
import { handoffsOfPlanTime, readHandoff, writeHandoff } from "../../src/runtime/records/handoff";
import { CLAIMED_HANDOFF_MAX_AGE_MS } from "../../src/runtime/tokens/handoff-takeover";
import { applyToken } from "../../src/runtime/tokens/token-apply";
import { releaseToken } from "../../src/runtime/tokens/token-release";
import type { RuntimeContext } from "../../src/shared/context";
import { createOutput, Redactor } from "../../src/shared/output";
import { provisionerEnv } from "../support/provisioner-env";

const USER = { username: "commands-bot", password: "commands-password-2b8c" };
const KEY = "c8feedface";

describe("token provisioner commands", () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ users: [USER] });
  });
  afterAll(() => emulator?.close());

  /** One provisioner run: its context, what it printed, in a given folder and terraform run. */
  const run = async (
    cmd: typeof applyToken,
    opts: { cwd: string; runId: string; env: Record<string, string>; onLine?: (line: string) => void; url?: string },
  ): Promise<string> => {
    const lines: string[] = [];
    const ctx: RuntimeContext = {
      cwd: opts.cwd,
      out: createOutput(
        (t) => {
          lines.push(t);
          opts.onLine?.(t);
        },
        new Redactor([USER.password]),
      ),
      env: provisionerEnv({
        GPUCLOUD_BASE_URL: opts.url ?? emulator.url,
        GPUCLOUD_USERNAME: USER.username,
        GPUCLOUD_PASSWORD: USER.password,
        GPUCLOUD_TIMEOUT_SECONDS: "10",
        GPUCLOUD_TOKEN_KEY: KEY,
        GPUCLOUD_TOKEN_WORKSPACE: "default",
        GPUCLOUD_TOKEN_PATH: "stack/ci",
        GPUCLOUD_TOKEN_PLAN_TIME: opts.runId,
        ...opts.env,
      }),
    };
    try {
      await cmd(ctx);
    } catch (err) {
      throw Object.assign(err as Error, { log: lines.join("") });
    }
    return lines.join("").replace(/\s+/g, " ");
  };
  const folder = () => mkdtempSync(path.join(tmpdir(), "token-commands-"));
  const named = (name: string) => emulator.tokens().filter((t) => t.name === name);

  test("a hand-off released by the same run is followed: a rename of the same token", async () => {
    const cwd = folder();
    const old = emulator.addToken({ name: "same-run-a" });
    await run(releaseToken, { cwd, runId: "1@1", env: { GPUCLOUD_TOKEN_NAME: "same-run-a" } });
    const log = await run(applyToken, { cwd, runId: "1@1", env: { GPUCLOUD_TOKEN_NAME: "same-run-b" } });
    expect(log).toContain(`API token id ${old.id}: renamed "same-run-a" to "same-run-b"`);
    expect(named("same-run-b")).toEqual([expect.objectContaining({ id: old.id })]);
    expect(readHandoff(cwd, "default", KEY, () => undefined)).toBeUndefined();
  });

  test("a hand-off of another run is not followed: a new token, a WARNING naming the old one, the file removed", async () => {
    const cwd = folder();
    const old = emulator.addToken({ name: "other-run-a" });
    // Applied from this folder first: its record gives the release the id.
    await run(applyToken, { cwd, runId: "0@0", env: { GPUCLOUD_TOKEN_NAME: "other-run-a" } });
    await run(releaseToken, { cwd, runId: "1@1", env: { GPUCLOUD_TOKEN_NAME: "other-run-a" } });
    const log = await run(applyToken, { cwd, runId: "2@2", env: { GPUCLOUD_TOKEN_NAME: "other-run-b" } });
    expect(log).toContain(`WARNING: API token "other-run-a" (id ${old.id}) was released by an earlier terraform run`);
    expect(log).toContain(`add previousNames: ["other-run-a"] to the ApiToken "stack/ci"`);
    expect(named("other-run-a")).toEqual([expect.objectContaining({ id: old.id })]);
    expect(named("other-run-b")).toHaveLength(1);
    expect(named("other-run-b")[0].id).not.toBe(old.id);
    expect(readHandoff(cwd, "default", KEY, () => undefined)).toBeUndefined();
  });

  test("a hand-off released on another API is not followed there, even in the same run: a token of that name on this API stays as it is", async () => {
    const other = await startEmulator({ users: [USER] });
    try {
      const cwd = folder();
      const released = other.addToken({ name: "moved-a" });
      await run(applyToken, { cwd, runId: "16@16", env: { GPUCLOUD_TOKEN_NAME: "moved-a", GPUCLOUD_TOKEN_BASE_URL: other.url } });
      const bystander = emulator.addToken({ name: "moved-a" }); // another deployment's token on this API
      await run(releaseToken, { cwd, runId: "17@17", env: { GPUCLOUD_TOKEN_NAME: "moved-a", GPUCLOUD_TOKEN_BASE_URL: other.url } });
      const log = await run(applyToken, { cwd, runId: "17@17", env: { GPUCLOUD_TOKEN_NAME: "moved-b" } });
      expect(log).toContain(`WARNING: API token "moved-a" (id ${released.id}) was released on another account or API address`);
      expect(named("moved-a")).toEqual([expect.objectContaining({ id: bystander.id })]);
      expect(named("moved-b")).toHaveLength(1);
      expect(named("moved-b")[0].id).not.toBe(bystander.id);
      expect(other.tokens().filter((t) => t.name === "moved-a")).toHaveLength(1);
      expect(readHandoff(cwd, "default", KEY, () => undefined)).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  test("a hand-off whose token was deleted meanwhile is not followed to another token of the old name", async () => {
    const cwd = folder();
    const now = Math.floor(Date.now() / 1000);
    const released = emulator.addToken({ name: "gone-a", createdAt: now - 100 });
    await run(applyToken, { cwd, runId: "17@17", env: { GPUCLOUD_TOKEN_NAME: "gone-a" } });
    const sameName = emulator.addToken({ name: "gone-a", createdAt: now - 50 }); // newer: not the one released
    await run(releaseToken, { cwd, runId: "18@18", env: { GPUCLOUD_TOKEN_NAME: "gone-a" } });
    expect(readHandoff(cwd, "default", KEY, () => undefined)?.id).toBe(released.id);
    emulator.deleteToken(released.id);
    const log = await run(applyToken, { cwd, runId: "18@18", env: { GPUCLOUD_TOKEN_NAME: "gone-b" } });
    expect(log).toMatch(
      /the API token "gone-a" \(id tok_\w+\) released by the replaced resource is not listed by these credentials \(revoked, or on another account, where it stays ACTIVE\); a new one was created/,
    );
    expect(named("gone-a")).toEqual([expect.objectContaining({ id: sameName.id })]);
    expect(named("gone-b")).toHaveLength(1);
    expect(named("gone-b")[0].id).not.toBe(sameName.id);
  });

  test("a hand-off of another workspace is never seen", async () => {
    const cwd = folder();
    const old = emulator.addToken({ name: "ws-a" });
    await run(releaseToken, { cwd, runId: "1@1", env: { GPUCLOUD_TOKEN_NAME: "ws-a", GPUCLOUD_TOKEN_WORKSPACE: "staging" } });
    const log = await run(applyToken, { cwd, runId: "1@1", env: { GPUCLOUD_TOKEN_NAME: "ws-b", GPUCLOUD_TOKEN_WORKSPACE: "prod" } });
    expect(log).toContain('created API token "ws-b"');
    expect(named("ws-a")).toEqual([expect.objectContaining({ id: old.id })]);
  });

  test("a claimed hand-off is honoured by a later run for the same name only", async () => {
    const cwd = folder();
    const old = emulator.addToken({ name: "claimed-a" });
    const base = {
      key: KEY,
      workspace: "default",
      id: old.id,
      name: "claimed-a",
      planTime: "1@1",
      api: accountDigest("GPUCLOUD_", emulator.url),
      releasedAt: new Date().toISOString(),
      claimedBy: "1@1",
    };
    writeHandoff(cwd, { ...base, targetName: "claimed-other" });
    let log = await run(applyToken, { cwd, runId: "3@3", env: { GPUCLOUD_TOKEN_NAME: "claimed-b" } });
    expect(log).toContain("WARNING");
    expect(named("claimed-a")).toHaveLength(1);

    writeHandoff(cwd, { ...base, targetName: "claimed-c" });
    log = await run(applyToken, { cwd, runId: "4@4", env: { GPUCLOUD_TOKEN_NAME: "claimed-c" } });
    expect(log).toContain(`finishing the rename of API token "claimed-a" to "claimed-c"`);
    expect(named("claimed-c")).toEqual([expect.objectContaining({ id: old.id })]);
  });

  test("a claimed hand-off older than CLAIMED_HANDOFF_MAX_AGE_MS is not followed (a tainted resource may have left it behind)", async () => {
    const cwd = folder();
    const old = emulator.addToken({ name: "stale-claim-a" });
    const releasedAt = new Date(Date.now() - CLAIMED_HANDOFF_MAX_AGE_MS - 60_000).toISOString();
    writeHandoff(cwd, {
      key: KEY,
      workspace: "default",
      id: old.id,
      name: "stale-claim-a",
      planTime: "1@1",
      api: accountDigest("GPUCLOUD_", emulator.url),
      releasedAt,
      claimedBy: "1@1",
      targetName: "stale-claim-b",
    });
    const log = await run(applyToken, { cwd, runId: "9@9", env: { GPUCLOUD_TOKEN_NAME: "stale-claim-b" } });
    expect(log).toContain("WARNING");
    expect(log).toContain('created API token "stale-claim-b"');
    expect(named("stale-claim-a")).toEqual([expect.objectContaining({ id: old.id })]);
    expect(readHandoff(cwd, "default", KEY, () => undefined)).toBeUndefined();
  });

  test("the create half claims the hand-off before it writes", async () => {
    const cwd = folder();
    emulator.addToken({ name: "claim-a" });
    await run(releaseToken, { cwd, runId: "5@5", env: { GPUCLOUD_TOKEN_NAME: "claim-a" } });
    emulator.setFaults({ paths: ["/api-tokens/"], serverErrorRate: 1 });
    try {
      await expect(
        run(applyToken, { cwd, runId: "5@5", env: { GPUCLOUD_TOKEN_NAME: "claim-b", GPUCLOUD_TIMEOUT_SECONDS: "2" } }),
      ).rejects.toThrow();
    } finally {
      emulator.setFaults({});
    }
    expect(readHandoff(cwd, "default", KEY, () => undefined)).toMatchObject({ claimedBy: "5@5", targetName: "claim-b" });
  });

  test("previousNames: renames the first previous name found, only when no token has the name", async () => {
    const cwd = folder();
    const old = emulator.addToken({ name: "prev-old" });
    let log = await run(applyToken, {
      cwd,
      runId: "6@6",
      env: { GPUCLOUD_TOKEN_NAME: "prev-new", GPUCLOUD_TOKEN_PREVIOUS_NAMES: JSON.stringify(["prev-missing", "prev-old"]) },
    });
    expect(log).toContain(`renaming "prev-old" (id ${old.id}), a previous name`);
    expect(named("prev-new")).toEqual([expect.objectContaining({ id: old.id })]);

    const another = emulator.addToken({ name: "prev-old" });
    log = await run(applyToken, {
      cwd,
      runId: "7@7",
      env: { GPUCLOUD_TOKEN_NAME: "prev-new", GPUCLOUD_TOKEN_PREVIOUS_NAMES: JSON.stringify(["prev-old"]) },
    });
    expect(log).toContain("is up to date; no change");
    expect(named("prev-old")).toEqual([expect.objectContaining({ id: another.id })]);
  });

  test("release asks the API nothing: it hands off the name, with the id this folder last applied under that name on this account", async () => {
    const cwd = folder();
    emulator.resetStats();
    await run(releaseToken, { cwd, runId: "8@8", env: { GPUCLOUD_TOKEN_NAME: "never-applied" } });
    expect(emulator.stats().requests).toBe(0);
    const byName = readHandoff(cwd, "default", KEY, () => undefined);
    expect(byName).toMatchObject({ name: "never-applied", planTime: "8@8" });
    expect(byName?.id).toBeUndefined();

    await run(applyToken, { cwd, runId: "8@9", env: { GPUCLOUD_TOKEN_NAME: "applied-here" } });
    const [applied] = named("applied-here");
    emulator.resetStats();
    const log = await run(releaseToken, { cwd, runId: "8@10", env: { GPUCLOUD_TOKEN_NAME: "applied-here" } });
    expect(emulator.stats().requests).toBe(0);
    expect(log).toContain(`released API token "applied-here" (id ${applied.id}) to the resource that replaces this one, if any`);
    expect(log).not.toContain("WARNING");
    expect(readHandoff(cwd, "default", KEY, () => undefined)).toMatchObject({ name: "applied-here", id: applied.id });
  });

  test("a hand-off whose token was renamed outside Terraform since this folder applied it follows the old name, as a look-up would", async () => {
    const cwd = folder();
    await run(applyToken, { cwd, runId: "19@1", env: { GPUCLOUD_TOKEN_NAME: "console-a" } });
    const [applied] = named("console-a");
    // Renamed in the console: through the API, as another party.
    const console = new ApiClient(
      { baseUrl: emulator.url, credentials: { username: USER.username, password: USER.password }, totalTimeoutMs: 10_000 },
      openNodeHttpSender,
    );
    await console.updateToken(applied.id, { name: "console-renamed" });
    await console.close();
    await run(releaseToken, { cwd, runId: "19@2", env: { GPUCLOUD_TOKEN_NAME: "console-a" } });
    const log = await run(applyToken, { cwd, runId: "19@2", env: { GPUCLOUD_TOKEN_NAME: "console-b" } });
    expect(log).toMatch(
      /the API token "console-a" \(id tok_\w+\) released by the replaced resource is not listed by these credentials \(revoked, or on another account, where it stays ACTIVE\); a new one was created/,
    );
    expect(emulator.tokens().find((t) => t.id === applied.id)?.name).toBe("console-renamed");
    expect(named("console-b")).toHaveLength(1);
  });

  test("a rename that created a new token while the applied one keeps its old name warns with the old id", async () => {
    const cwd = folder();
    await run(applyToken, { cwd, runId: "9@9", env: { GPUCLOUD_TOKEN_NAME: "cbd-old" } });
    const [old] = named("cbd-old");
    // create_before_destroy: no release, the create half of the next run comes first.
    const log = await run(applyToken, { cwd, runId: "10@10", env: { GPUCLOUD_TOKEN_NAME: "cbd-new" } });
    expect(log).toContain(`WARNING: API token "cbd-old" (id ${old.id}), which the ApiToken "stack/ci" managed before, stays ACTIVE`);
    // A description-only change under create_before_destroy keeps the same token: no warning.
    const quiet = await run(applyToken, { cwd, runId: "11@11", env: { GPUCLOUD_TOKEN_NAME: "cbd-new", GPUCLOUD_TOKEN_DESCRIPTION: "d" } });
    expect(quiet).not.toContain("WARNING");
  });

  test("the stack's read: only the managed tokens; a missing one is an observation, at plan time and after the writes", async () => {
    const kept = emulator.addToken({ name: "inv-kept", description: "x" });
    const log: string[] = [];
    const ctx: RuntimeContext = {
      cwd: folder(),
      out: createOutput((t) => void log.push(t), new Redactor([])),
      env: { GPUCLOUD_BASE_URL: emulator.url, GPUCLOUD_USERNAME: USER.username, GPUCLOUD_PASSWORD: USER.password },
    };
    const query = {
      "k1.name": "inv-kept",
      "k1.description": "y",
      "k2.name": "inv-missing",
      "k2.previous.0": "inv-kept",
      "k3.name": "inv-gone",
    };
    const result = await stackRead(ctx, query);
    expect(result).toMatchObject({
      "k1.id": kept.id,
      "k1.token": kept.token,
      "k1.in_sync": "false",
      "k1.reason": 'the description of API token "inv-kept" differs',
      // A pending rename keeps the token's id and value, so the plan knows them.
      "k2.id": kept.id,
      "k2.token": kept.token,
      "k2.in_sync": "false",
      "k2.reason": `rename pending from "inv-kept" (id ${kept.id})`,
      "k3.id": "",
      "k3.reason": 'no API token is named "inv-gone"',
    });
    expect(Object.keys(result).every((k) => /^k[123]\./.test(k) || k === "warnings")).toBe(true);
    expect(result.warnings).toBe("");
    expect(Object.values(result)).not.toContain(emulator.tokens().find((t) => t.name !== "inv-kept")?.token);
    // After the writes (or in a refresh-only plan, where this read runs at plan time) a missing token
    // is reported with empty attributes, not an error: a refresh-only plan must show the drift.
    expect(log.join("")).not.toContain("after the writes");
    const after = await stackRead(ctx, { ...query, after_write: "true" });
    expect(after).toMatchObject({ "k3.id": "", "k3.created_at": "", "k3.in_sync": "false" });
    // Said of each token no token has the name of (a pending rename's too), not of the one found.
    const said = log.join("").match(/no API token is named "[^"]+" after the writes/g);
    expect(said).toEqual(['no API token is named "inv-missing" after the writes', 'no API token is named "inv-gone" after the writes']);
  });

  test("two create halves of one folder with the same name (known only at apply) make one token, not two", async () => {
    const cwd = folder();
    emulator.setFaults({ latencyMs: 150 });
    try {
      const both = await Promise.all(
        ["c8aaaa", "c8bbbb"].map((key) =>
          run(applyToken, { cwd, runId: "13@13", env: { GPUCLOUD_TOKEN_NAME: "raced", GPUCLOUD_TOKEN_KEY: key } }),
        ),
      );
      expect(named("raced")).toHaveLength(1);
      expect(both.filter((log) => log.includes('created API token "raced"'))).toHaveLength(1);
      expect(both.filter((log) => log.includes('adopted existing API token "raced"'))).toHaveLength(1);
    } finally {
      emulator.setFaults({});
    }
    expect(readdirSync(path.join(cwd, ".gpucloud-handoff")).filter((f) => f.startsWith("lock-"))).toEqual([]);
  });

  test("two create halves whose names differ only in case and surrounding spaces (known only at apply) make one token", async () => {
    const cwd = folder();
    emulator.setFaults({ latencyMs: 150 });
    try {
      // A name matches another after trimming and case-folding, so both halves must take one lock:
      // with a lock per spelling, both list no such token and both create one.
      await Promise.all(
        ["Fold-Raced", "fold-raced "].map((name, i) =>
          run(applyToken, { cwd, runId: "17@17", env: { GPUCLOUD_TOKEN_NAME: name, GPUCLOUD_TOKEN_KEY: `c8fold${i}` } }),
        ),
      );
      expect(emulator.tokens().filter((t) => t.name.trim().toLowerCase() === "fold-raced")).toHaveLength(1);
    } finally {
      emulator.setFaults({});
    }
  });

  test("one lock per name and API, whatever the spelling of the API's address", () => {
    const cwd = "/stack";
    const lock = nameLockPath(cwd, "https://api.example.com/v1", "ci");
    expect(nameLockPath(cwd, " HTTPS://API.example.com/v1// ", "ci")).toBe(lock);
    expect(nameLockPath(cwd, "https://api.example.com/v2", "ci")).not.toBe(lock);
    expect(nameLockPath(cwd, "https://api.example.com/v1", "cd")).not.toBe(lock);
    // Names are matched after trimming and case-folding, so they are locked that way too.
    expect(nameLockPath(cwd, "https://api.example.com/v1", " CI ")).toBe(lock);
    // The path's case is the API's own: two tenants' locks are apart.
    expect(nameLockPath(cwd, "https://api.example.com/V1", "ci")).not.toBe(lock);
  });

  test("a lock left by a dead process long ago is broken; a fresh one is waited for", async () => {
    const cwd = folder();
    const lockFile = nameLockPath(cwd, emulator.url, "stale-lock");
    mkdirSync(path.dirname(lockFile), { recursive: true });
    writeFileSync(lockFile, "12345\n");
    await expect(
      run(applyToken, { cwd, runId: "14@14", env: { GPUCLOUD_TOKEN_NAME: "stale-lock", GPUCLOUD_TIMEOUT_SECONDS: "1" } }),
    ).rejects.toThrow(/another script is creating or adopting an API token named "stale-lock"/);
    expect(named("stale-lock")).toHaveLength(0);

    const old = new Date(Date.now() - MIN_LEASE_MS - 60_000);
    utimesSync(lockFile, old, old);
    const log = await run(applyToken, { cwd, runId: "14@14", env: { GPUCLOUD_TOKEN_NAME: "stale-lock", GPUCLOUD_TIMEOUT_SECONDS: "3" } });
    expect(log).toContain('created API token "stale-lock"');
    expect(existsSync(lockFile)).toBe(false);
  });

  test("a lock of a process of this host that is gone is broken at once (a watchdog exit or Ctrl-C leaves one behind)", async () => {
    const cwd = folder();
    const lockFile = nameLockPath(cwd, emulator.url, "dead-holder");
    mkdirSync(path.dirname(lockFile), { recursive: true });
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    writeFileSync(lockFile, `${gone}\n${hostname()}\n`);
    const log = await run(applyToken, { cwd, runId: "15@15", env: { GPUCLOUD_TOKEN_NAME: "dead-holder", GPUCLOUD_TIMEOUT_SECONDS: "2" } });
    expect(log).toContain('created API token "dead-holder"');
    expect(log).not.toContain("waiting for another script");
    expect(existsSync(lockFile)).toBe(false);
  });

  test.each([
    // A live holder of this host, its lock naming no lease: judged by the waiter's budget, longer than its age.
    ["the waiter's budget", "long-budget", () => `${process.pid}\n${hostname()}\n`, "1800"],
    // A holder on another host (its process cannot be asked) whose budget is an hour: its own lease, whatever the waiter's.
    ["the holder's own lease", "holder-lease", () => `12345\nanother-host\nnonce\n${Date.now() + 3600_000}\n`, "3"],
  ])("a lock older than ten minutes is waited for while %s holds it (never two creates at once)", async (_why, name, content, budget) => {
    const cwd = folder();
    const lockFile = nameLockPath(cwd, emulator.url, name);
    mkdirSync(path.dirname(lockFile), { recursive: true });
    writeFileSync(lockFile, content());
    const old = new Date(Date.now() - MIN_LEASE_MS - 60_000);
    utimesSync(lockFile, old, old);
    // The holder finishes a moment later.
    const release = setTimeout(() => rmSync(lockFile, { force: true }), 700);
    try {
      const log = await run(applyToken, { cwd, runId: "16@16", env: { GPUCLOUD_TOKEN_NAME: name, GPUCLOUD_TIMEOUT_SECONDS: budget } });
      expect(log).toContain(`waiting for another script that is creating or adopting an API token named "${name}"`);
      expect(log).toContain(`created API token "${name}"`);
    } finally {
      clearTimeout(release);
    }
  });

  test("blank names are refused by the scripts too", async () => {
    await expect(run(applyToken, { cwd: folder(), runId: "12@12", env: { GPUCLOUD_TOKEN_NAME: "   " } })).rejects.toThrow(
      /must not be blank/,
    );
  });
});

describe("token identity: spellings, unfinished applies, orphaned provisioners", () => {
  let emulator: RunningEmulator;
  let trimming: RunningEmulator;
  let lowering: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ users: [USER] });
    trimming = await startEmulator({ users: [USER], storeNames: "trimmed" });
    lowering = await startEmulator({ users: [USER], storeNames: "lower-cased" });
  });
  afterAll(async () => {
    await emulator?.close();
    await trimming?.close();
    await lowering?.close();
  });

  const folder = () => mkdtempSync(path.join(tmpdir(), "token-identity-"));
  const run = async (
    cmd: typeof applyToken,
    opts: { cwd: string; env: Record<string, string>; api?: RunningEmulator; onLine?: (line: string) => void },
  ): Promise<string> => {
    const lines: string[] = [];
    const ctx: RuntimeContext = {
      cwd: opts.cwd,
      out: createOutput(
        (t) => {
          lines.push(t);
          opts.onLine?.(t);
        },
        new Redactor([USER.password]),
      ),
      env: provisionerEnv({
        GPUCLOUD_BASE_URL: (opts.api ?? emulator).url,
        GPUCLOUD_USERNAME: USER.username,
        GPUCLOUD_PASSWORD: USER.password,
        GPUCLOUD_TIMEOUT_SECONDS: "10",
        GPUCLOUD_TOKEN_KEY: KEY,
        GPUCLOUD_TOKEN_WORKSPACE: "default",
        GPUCLOUD_TOKEN_PATH: "stack/ci",
        GPUCLOUD_TOKEN_PLAN_TIME: "2026-11-01T10:00:00Z",
        ...opts.env,
      }),
    };
    try {
      await cmd(ctx);
    } catch (err) {
      (err as Error).message += `\n--- log ---\n${lines.join("")}`;
      throw err;
    }
    return lines.join("").replace(/\s+/g, " ");
  };

  test.each([
    ["trimmed", "trim-me ", "trim-me"],
    ["lower-cased", "Case-Me", "case-me"],
  ])("a server that stores names %s: applies 1, 2, 3 leave exactly one token", async (how, name, stored) => {
    const api = how === "trimmed" ? trimming : lowering;
    const cwd = folder();
    const logs: string[] = [];
    for (let i = 0; i < 3; i++) logs.push(await run(applyToken, { cwd, api, env: { GPUCLOUD_TOKEN_NAME: name } }));
    const tokens = api.tokens().filter((t) => t.name === stored);
    expect(tokens).toHaveLength(1);
    expect(api.stats().byRoute["POST /api-tokens"]).toBe(1);
    expect(logs[0]).toContain(`created API token "${stored}" (id ${tokens[0].id})`);
    expect(logs[0]).toContain(`the API stored API token ${tokens[0].id}'s name as "${stored}"`);
    // A fresh folder (no record) finds it too: by the folded name.
    const fresh = await run(applyToken, { cwd: folder(), api, env: { GPUCLOUD_TOKEN_NAME: name } });
    expect(fresh).toContain(`adopted existing API token "${stored}" (id ${tokens[0].id}) instead of creating another`);
    expect(api.tokens().filter((t) => t.name === stored)).toHaveLength(1);
  });

  test("a rename under create_before_destroy on a server that lower-cases names still warns that the old token stays active", async () => {
    const cwd = folder();
    await run(applyToken, { cwd, api: lowering, env: { GPUCLOUD_TOKEN_NAME: "Cbd-Lower-Old" } });
    const [old] = lowering.tokens().filter((t) => t.name === "cbd-lower-old");
    // No release (create_before_destroy): the record names "Cbd-Lower-Old", the API "cbd-lower-old".
    const log = await run(applyToken, { cwd, api: lowering, env: { GPUCLOUD_TOKEN_NAME: "Cbd-Lower-New" } });
    expect(log).toContain(`WARNING: API token "cbd-lower-old" (id ${old.id}), which the ApiToken "stack/ci" managed before, stays ACTIVE`);
  });

  test("several tokens whose names fold to the configured one, none exact: no create, the ids named", async () => {
    const a = emulator.addToken({ name: "Fold-Amb" });
    const b = emulator.addToken({ name: "fold-amb " });
    // The plan's check block says what the apply does: it refuses to choose (it does not use one of them).
    const ctx: RuntimeContext = {
      cwd: folder(),
      out: createOutput(() => undefined, new Redactor([])),
      env: { GPUCLOUD_BASE_URL: emulator.url, GPUCLOUD_USERNAME: USER.username, GPUCLOUD_PASSWORD: USER.password },
    };
    const { warnings } = await stackRead(ctx, { "k1.name": "FOLD-AMB" });
    // Oldest first; tokens created in the same second (the emulator counts seconds) in the order of their ids.
    const [first, second] = [a, b].sort((x, y) => x.created_at - y.created_at || (x.id < y.id ? -1 : 1));
    expect(warnings).toContain(`ids ${first.id}, ${second.id}`);
    expect(warnings).toContain("the apply refuses to choose one");
    expect(warnings).not.toContain("the stack uses");
    const before = emulator.stats().tokenWrites;
    await expect(run(applyToken, { cwd: folder(), env: { GPUCLOUD_TOKEN_NAME: "FOLD-AMB" } })).rejects.toThrow(
      /no API token is named exactly "FOLD-AMB", but 2 have that name after trimming and case-folding .*not creating another/,
    );
    await expect(run(applyToken, { cwd: folder(), env: { GPUCLOUD_TOKEN_NAME: "FOLD-AMB" } })).rejects.toThrow(new RegExp(`id ${a.id}`));
    await expect(run(applyToken, { cwd: folder(), env: { GPUCLOUD_TOKEN_NAME: "FOLD-AMB" } })).rejects.toThrow(new RegExp(`id ${b.id}`));
    expect(emulator.stats().tokenWrites).toBe(before);
  });

  test("a pending record (an apply that failed after its write) is adopted by the retry, never a second token", async () => {
    const cwd = folder();
    const stray = emulator.addToken({ name: "stored-otherwise" });
    writeAppliedRecord(cwd, {
      key: KEY,
      workspace: "default",
      id: stray.id,
      name: "wanted-name",
      api: accountDigest("GPUCLOUD_", emulator.url),
      pending: true,
      at: new Date().toISOString(),
    });
    const log = await run(applyToken, { cwd, env: { GPUCLOUD_TOKEN_NAME: "wanted-name" } });
    expect(log).toContain(
      `adopted API token "stored-otherwise" (id ${stray.id}), which an unfinished apply from this folder wrote for "wanted-name"`,
    );
    expect(emulator.tokens().filter((t) => t.name === "wanted-name")).toEqual([expect.objectContaining({ id: stray.id })]);
    const record = readAppliedRecord(cwd, "default", KEY, () => undefined);
    expect(record?.id).toBe(stray.id);
    expect(record?.pending).toBeUndefined();
  });

  test("another token of the name appearing during a create is warned about, naming both ids", async () => {
    let other: string | undefined;
    const log = await run(applyToken, {
      cwd: folder(),
      env: { GPUCLOUD_TOKEN_NAME: "late-twin" },
      // Right after the create, before the look-up that follows it.
      onLine: (line) => {
        if (line.includes('created API token "late-twin"') && !other) other = emulator.addToken({ name: "late-twin" }).id;
      },
    });
    const mine = emulator.tokens().find((t) => t.name === "late-twin" && t.id !== other)!;
    expect(log).toContain(`another API token named "late-twin" exists besides the one just created (id ${other})`);
    expect(log).toContain(`This stack uses ${mine.id}`);
  });

  test("a create half whose run left it finishes its write; the next run adopts, never duplicates", async () => {
    // Terraform killed meanwhile (Ctrl-C, a cancelled job): nothing here asks whether the run is
    // alive, so the write happens and the next apply finds the token by name.
    const cwd = folder();
    await run(applyToken, { cwd, env: { GPUCLOUD_TOKEN_NAME: "orphan-done", GPUCLOUD_TOKEN_PLAN_TIME: "2026-11-01T10:00:00Z" } });
    const retry = await run(applyToken, {
      cwd,
      env: { GPUCLOUD_TOKEN_NAME: "orphan-done", GPUCLOUD_TOKEN_PLAN_TIME: "2026-11-01T10:05:00Z" },
    });
    expect(emulator.tokens().filter((t) => t.name === "orphan-done")).toHaveLength(1);
    expect(retry).toMatch(/API token "orphan-done" \(id \S+\) is up to date; no change/);
  });

  test("a hand-off of this plan time that was there when the run's plan-time read looked is another run's (two runs within one second)", async () => {
    const cwd = folder();
    const old = emulator.addToken({ name: "earlier-a" });
    const planTime = "2026-11-01T10:00:00Z";
    const handoff = {
      key: KEY,
      workspace: "default",
      id: old.id,
      name: "earlier-a",
      planTime,
      api: accountDigest("GPUCLOUD_", emulator.url),
    };
    writeHandoff(cwd, { ...handoff, releasedAt: "2026-11-01T10:00:00.300Z" });
    const earlier = handoffsOfPlanTime(cwd, "default", planTime);
    const planned = `${encodeRunTicket({ id: "a".repeat(32), planTime, earlier })} `;
    const applied = await run(applyToken, { cwd, env: { GPUCLOUD_TOKEN_NAME: "earlier-b", [PLANNED_ENV]: planned } });
    expect(applied).toContain('created API token "earlier-b"');
    expect(applied).toContain(`API token "earlier-a" (id ${old.id}) was released by an earlier terraform run`);
    expect(emulator.tokens().find((t) => t.id === old.id)?.name).toBe("earlier-a");
    expect(readHandoff(cwd, "default", KEY, () => undefined)).toBeUndefined();

    // Released after the read, in the same second, by this run's destroy half: taken over.
    writeHandoff(cwd, { ...handoff, name: "earlier-b", id: undefined, releasedAt: "2026-11-01T10:00:00.900Z" });
    const renamed = await run(applyToken, { cwd, env: { GPUCLOUD_TOKEN_NAME: "earlier-c", [PLANNED_ENV]: planned } });
    expect(renamed).toMatch(/renamed "earlier-b" to "earlier-c"/);
  });

  test("the destroy half never fails: triggers of an older state, damaged JSON, an API that cannot be reached", async () => {
    const cwd = folder();
    // Triggers without a key (an edited state).
    const noKey = await run(releaseToken, {
      cwd,
      env: { GPUCLOUD_TOKEN_TRIGGERS: JSON.stringify({ name: "old-state" }), GPUCLOUD_TOKEN_KEY: "" },
    });
    expect(noKey).toContain("this resource's triggers cannot be read (GPUCLOUD_TOKEN_KEY is required");
    expect(noKey).toContain("stays ACTIVE");
    const damaged = await run(releaseToken, { cwd, env: { GPUCLOUD_TOKEN_TRIGGERS: "{not json" } });
    expect(damaged).toContain("is not a JSON object");
    const badKey = await run(releaseToken, {
      cwd,
      env: {
        GPUCLOUD_TOKEN_NAME: "bad-key",
        GPUCLOUD_TOKEN_KEY: "../escape",
        GPUCLOUD_BASE_URL: "http://127.0.0.1:9",
        GPUCLOUD_TIMEOUT_SECONDS: "1",
      },
    });
    expect(badKey).toContain('could not release API token "bad-key"');
    expect(readdirSync(cwd)).toEqual([]);
  });

  test("a configuration without a run id: no hand-off is taken over, and the create works", async () => {
    const cwd = folder();
    const old = emulator.addToken({ name: "norun-a" });
    writeHandoff(cwd, {
      key: KEY,
      workspace: "default",
      id: old.id,
      name: "norun-a",
      planTime: "",
      api: accountDigest("GPUCLOUD_", emulator.url),
      releasedAt: new Date().toISOString(),
    });
    const applied = await run(applyToken, { cwd, env: { GPUCLOUD_TOKEN_NAME: "norun-b", GPUCLOUD_TOKEN_PLAN_TIME: "" } });
    expect(applied).toContain('created API token "norun-b"');
    expect(applied).toContain(`API token "norun-a" (id ${old.id}) was released by an earlier terraform run`);
    expect(emulator.tokens().find((t) => t.id === old.id)?.name).toBe("norun-a");
  });
});
