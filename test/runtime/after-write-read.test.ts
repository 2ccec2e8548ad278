/**
 * The stack's read after the writes: in a run, it takes the run's walk plus the tokens
 * created since, which carry the new tokens' values, instead of walking the account once per
 * group; it walks only when a value it must give is not among them. Run as Terraform runs it
 * (the bundled script), after provisioners of the same run walked and wrote.
 */
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { ApiClient } from "../../src/client/client";
import { openNodeHttpSender } from "../../src/client/node-http-sender";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { encodeRunTicket } from "../../src/protocol";
import { accountRefIn } from "../../src/runtime/account-identity";
import { randomHex } from "../../src/runtime/io/crypto";
import { withLatestTokens } from "../../src/runtime/run/run-walk";
import type { RuntimeContext } from "../../src/shared/context";
import { createOutput, Redactor } from "../../src/shared/output";
import { runProcess, SCRIPT_NODE, SCRIPT_PATH } from "../support/processes";
import { runParentIn } from "../support/run-folders";

const BUNDLE = path.join(__dirname, "..", "..", "lib", "assets", "gpucloud-tf.js");
const USER = { username: "after-write-bot", password: "after-write-pw-77c2" };
const OTHERS = 45;

describe("the read after the writes takes the run's walk", () => {
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
      // The run folder of this test alone.
      TMPDIR: `${cwd}-tmp`,
    };
    const ticket = { id: randomHex(16) };
    const ctx: RuntimeContext = { cwd, env, out: createOutput(() => undefined, new Redactor([])), ticket };
    const client = new ApiClient(
      { baseUrl: api.url, credentials: { username: USER.username, password: USER.password }, totalTimeoutMs: 10_000 },
      openNodeHttpSender,
    );
    const account = accountRefIn(env, undefined, undefined);
    /** What the run's create halves do before the read: walk once, then write and record. */
    const provisioners = async (write: (c: ApiClient) => Promise<{ id: string; name: string; token: string; created_at: number }>) =>
      withLatestTokens(ctx, client, account, async () => {
        const written = await write(client);
        return { result: written, wrote: { ...written, description: null } };
      });
    const read = async (query: Record<string, string>) => {
      api.resetStats();
      const ran = await runProcess(SCRIPT_NODE, [BUNDLE, "stack-read"], { cwd, env, stdin: JSON.stringify(query) });
      expect(ran.stderr).not.toMatch(/error/i);
      expect(ran.code).toBe(0);
      return { result: JSON.parse(ran.stdout) as Record<string, string>, lists: api.stats().byRoute["GET /api-tokens"] ?? 0 };
    };
    const folder = path.join(runParentIn(env.TMPDIR!), ticket.id);
    const walkFiles = () => (existsSync(folder) ? readdirSync(folder) : []).filter((f) => f.endsWith(".walk.json"));
    const afterWrite = (extra: Record<string, string>) => ({
      workspace: "default",
      after_write: "true",
      ticket: encodeRunTicket(ticket),
      ...extra,
    });
    return { api, client, provisioners, read, walkFiles, afterWrite };
  };

  test("a created token's value comes from the tokens created since the walk: no walk of the account", async () => {
    const { api, client, provisioners, read, afterWrite } = await setUp();
    const created = await provisioners((c) => c.createToken({ name: "fresh-one" }));
    // t1 is a token the plan-time read already found: the constructs take its value from that read.
    const { result, lists } = await read(afterWrite({ listed_slots: "t0", "t0.name": "fresh-one", "t1.name": "other-7" }));
    expect(result["t0.id"]).toBe(created.id);
    expect(result["t0.token"]).toBe(created.token);
    expect(result["t0.in_sync"]).toBe("true");
    expect(result["t1.id"]).toBe(api.tokens().find((t) => t.name === "other-7")?.id);
    expect(lists).toBeLessThanOrEqual(2);
    await client.close();
  });

  test("a token renamed through a hand-off (old, so not among the newest) makes the read walk for its value", async () => {
    const { api, client, provisioners, read, afterWrite } = await setUp();
    const old = api.tokens().find((t) => t.name === "other-3")!;
    await provisioners((c) => c.updateToken(old.id, { name: "renamed-here" }));
    const { result, lists } = await read(afterWrite({ listed_slots: "t0", "t0.name": "renamed-here" }));
    expect(result["t0.id"]).toBe(old.id);
    expect(result["t0.token"]).toBe(old.token);
    expect(lists).toBeGreaterThanOrEqual(Math.ceil(OTHERS / 10));
    await client.close();
  });

  test("the same rename, with no expression referring to its value or last use (not a listed slot): no walk, the id and name from the run's", async () => {
    const { api, client, provisioners, read, afterWrite } = await setUp();
    const old = api.tokens().find((t) => t.name === "other-4")!;
    await provisioners((c) => c.updateToken(old.id, { name: "renamed-unlisted" }));
    const { result, lists } = await read(afterWrite({ listed_slots: "", "t0.name": "renamed-unlisted" }));
    expect(result["t0.id"]).toBe(old.id);
    expect(result["t0.name"]).toBe("renamed-unlisted");
    expect(result["t0.in_sync"]).toBe("true");
    expect(lists).toBeLessThanOrEqual(2);
    await client.close();
  });

  test("a valueInState: false token renamed through a hand-off is walked for too: its last use is the API's, not the walk file's", async () => {
    const { api, client, provisioners, read, afterWrite } = await setUp();
    const old = api.tokens().find((t) => t.name === "other-5")!;
    // A token in use: the walk file keeps no last use.
    const user = new ApiClient({ baseUrl: api.url, credentials: { apiToken: old.token }, totalTimeoutMs: 10_000 }, openNodeHttpSender);
    await user.listFlavors();
    await user.close();
    const lastUsed = api.tokens().find((t) => t.id === old.id)!.last_used;
    expect(lastUsed).toBeGreaterThan(0);
    await provisioners((c) => c.updateToken(old.id, { name: "renamed-quiet" }));
    const { result, lists } = await read(afterWrite({ listed_slots: "t0", "t0.name": "renamed-quiet", "t0.value_in_state": "false" }));
    expect(result["t0.id"]).toBe(old.id);
    expect(result["t0.last_used"]).toBe(String(lastUsed));
    expect(result["t0.token"]).toBe("");
    expect(lists).toBeGreaterThanOrEqual(Math.ceil(OTHERS / 10));
    await client.close();
  });

  test("before any provisioner took the run's walk (a read at plan time), the read walks and leaves no walk file for the apply", async () => {
    const { api, client, read, walkFiles, afterWrite } = await setUp();
    const { result, lists } = await read(afterWrite({ listed_slots: "", "t0.name": "other-2" }));
    expect(result["t0.id"]).toBe(api.tokens().find((t) => t.name === "other-2")?.id);
    expect(lists).toBeGreaterThanOrEqual(Math.ceil(OTHERS / 10));
    // A walk taken now would be what the apply's create halves trust, blind to renames made before the apply.
    expect(walkFiles()).toEqual([]);
    await client.close();
  });

  test("without the run (no walk to share) the read walks", async () => {
    const { client, provisioners, read } = await setUp();
    const created = await provisioners((c) => c.createToken({ name: "fresh-three" }));
    const { result, lists } = await read({ workspace: "default", after_write: "true", "t0.name": "fresh-three" });
    expect(result["t0.token"]).toBe(created.token);
    expect(lists).toBeGreaterThanOrEqual(Math.ceil(OTHERS / 10));
    await client.close();
  });
});
