/**
 * The stack's read after the writes of an account: it reads only the tokens the plan had no id
 * for, from what was created since the plan's walk (the ticket's mark), newest first, instead of
 * walking the account; it walks only when such a token is not among the newest (an old token
 * adopted by name). Run as Terraform runs it (the bundled script).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { encodeRunTicket } from "../../src/protocol";
import { accountFingerprint, accountRefIn, ledgerAccountOf } from "../../src/runtime/account-identity";
import { markOf } from "../../src/runtime/writer/latest-tokens";
import { runProcess, SCRIPT_NODE, SCRIPT_PATH } from "../support/processes";

const BUNDLE = path.join(__dirname, "..", "..", "lib", "assets", "gpucloud-tf.js");
const USER = { username: "after-write-bot", password: "after-write-pw-77c2" };
const OTHERS = 45;

describe("the read after the writes", () => {
  const servers: RunningEmulator[] = [];
  afterAll(async () => Promise.all(servers.map((s) => s.close())));

  /** An account of 45 other tokens in pages of at most 10: a walk takes 5 list requests or more. */
  const setUp = async () => {
    const api = await startEmulator({ users: [USER], faults: { maxPageSize: 10 } });
    servers.push(api);
    for (let i = 0; i < OTHERS; i++) api.addToken({ name: `other-${i}`, createdAt: 1_700_000_000 + i });
    const cwd = mkdtempSync(path.join(tmpdir(), "after-write-"));
    const env: NodeJS.ProcessEnv = {
      PATH: SCRIPT_PATH,
      GPUCLOUD_BASE_URL: api.url,
      GPUCLOUD_USERNAME: USER.username,
      GPUCLOUD_PASSWORD: USER.password,
      GPUCLOUD_TIMEOUT_SECONDS: "20",
    };
    const fingerprint = accountFingerprint(ledgerAccountOf(accountRefIn(env, undefined, undefined)));
    // The plan's walk ended at the newest token there was then.
    const plannedMark = markOf(api.tokens().map((t) => ({ ...t, token: "" })))!;
    const read = async (query: Record<string, string>) => {
      api.resetStats();
      const ran = await runProcess(SCRIPT_NODE, [BUNDLE, "stack-read"], { cwd, env, stdin: JSON.stringify(query) });
      expect(ran.stderr).not.toMatch(/error/i);
      expect(ran.code).toBe(0);
      return { result: JSON.parse(ran.stdout) as Record<string, string>, lists: api.stats().byRoute["GET /api-tokens"] ?? 0 };
    };
    const afterWrite = (extra: Record<string, string>, mark = plannedMark) => ({
      workspace: "default",
      after_write: "true",
      ticket: encodeRunTicket({ accounts: [fingerprint], marks: { [fingerprint]: mark } }),
      ...extra,
    });
    return { api, read, afterWrite };
  };

  test("a created token's value comes from what was created since the plan: one list request, no walk", async () => {
    const { api, read, afterWrite } = await setUp();
    const created = api.addToken({ name: "new-one" });
    const { result, lists } = await read(afterWrite({ "t0.name": "new-one", "t0.path": "s/new", "t1.name": "other-3", new_slots: "t0" }));
    expect(result["t0.id"]).toBe(created.id);
    expect(result["t0.token"]).toBe(created.token);
    // Only the new slot is read: the other token's attributes are the plan-time read's.
    expect(result["t1.id"]).toBeUndefined();
    expect(JSON.parse(result.ledger).t).toEqual({ "s/new": ["new-one", created.id, expect.any(String), ""] });
    expect(lists).toBe(1);
  });

  test("a token adopted by name that is old (not among the newest) makes the read walk", async () => {
    const { read, afterWrite } = await setUp();
    const { result, lists } = await read(afterWrite({ "t0.name": "other-7", "t0.path": "s/adopted", new_slots: "t0" }));
    expect(result["t0.name"]).toBe("other-7");
    expect(lists).toBeGreaterThan(OTHERS / 10);
  });

  test("without a mark (an empty account at plan, or no ticket) the read walks", async () => {
    const { api, read } = await setUp();
    const created = api.addToken({ name: "new-two" });
    const { result, lists } = await read({ workspace: "default", after_write: "true", "t0.name": "new-two", new_slots: "t0" });
    expect(result["t0.id"]).toBe(created.id);
    expect(lists).toBeGreaterThan(OTHERS / 10);
  });

  test("no new slot: the account is not even logged in to", async () => {
    const { api, read, afterWrite } = await setUp();
    const { result } = await read(afterWrite({ "t0.name": "other-1", new_slots: "" }));
    expect(result["t0.id"]).toBeUndefined();
    expect(api.stats().logins).toBe(0);
  });
});
