/**
 * The create half against the id the plan showed (GPUCLOUD_TOKEN_PLANNED, here without a run's ticket), and the roster's
 * destroy-time command, which reports the tokens a stack no longer manages from its environment alone.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { decodePlanned, decodeRunTicket, encodeRunTicket } from "../../src/protocol";
import { applyToken } from "../../src/runtime/tokens/token-apply";
import { releaseRoster } from "../../src/runtime/tokens/token-roster";
import type { RuntimeContext } from "../../src/shared/context";
import { createOutput, Redactor } from "../../src/shared/output";

const USER = { username: "planned-bot", password: "planned-password-4e1a" };

function context(env: NodeJS.ProcessEnv, lines: string[]): RuntimeContext {
  return {
    cwd: mkdtempSync(path.join(tmpdir(), "planned-id-")),
    out: createOutput((t) => void lines.push(t), new Redactor([USER.password])),
    env,
  };
}

describe("what the plan showed the create half (GPUCLOUD_TOKEN_PLANNED)", () => {
  const id = "0123456789abcdef0123456789abcdef";

  test("the run's ticket carries its id, plan time, the earlier hand-offs and the plan's accounts; the planned id follows it", () => {
    const ticket = { id, planTime: "2026-11-27T04:00:00Z", earlier: ["0123456789ab"], accounts: ["aaaaaaaaaaaa", "bbbbbbbbbbbb"] };
    const text = encodeRunTicket(ticket);
    expect(decodeRunTicket(text)).toEqual(ticket);
    expect(decodePlanned(`${text} tok_1`)).toEqual({ ticket, id: "tok_1" });
    // A create: the read found no token.
    expect(decodePlanned(`${text} `)).toEqual({ ticket, id: "" });
    // A ticket without a plan time or lists (a read that may run at apply, a stack without a plan time); empty lists.
    expect(decodeRunTicket(encodeRunTicket({ id }))).toEqual({ id, planTime: undefined, earlier: undefined, accounts: undefined });
    expect(decodeRunTicket(encodeRunTicket({ id, earlier: [], accounts: [] }))).toEqual({
      id,
      planTime: undefined,
      earlier: [],
      accounts: [],
    });
  });

  test("absent, or not a ticket: no shared files, no hand-off, the id as given", () => {
    expect(decodePlanned(undefined)).toEqual({ ticket: undefined, id: "" });
    expect(decodePlanned(" tok_2")).toEqual({ ticket: undefined, id: "tok_2" });
    // Too short to be unguessable, or not of the form: not a ticket.
    expect(decodeRunTicket("abc.-.-/x")).toBeUndefined();
    expect(decodeRunTicket(`${id}/x`)).toBeUndefined();
    expect(decodeRunTicket(`../${id}./x`)).toBeUndefined();
  });
});

describe("the create half and the planned id", () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ users: [USER] });
  });
  afterAll(() => emulator?.close());

  const apply = async (env: Record<string, string>) => {
    const lines: string[] = [];
    const ctx = context(
      {
        GPUCLOUD_BASE_URL: emulator.url,
        GPUCLOUD_USERNAME: USER.username,
        GPUCLOUD_PASSWORD: USER.password,
        GPUCLOUD_TIMEOUT_SECONDS: "10",
        GPUCLOUD_TOKEN_KEY: "c0ffee",
        GPUCLOUD_TOKEN_PATH: "stack/ci",
        ...env,
      },
      lines,
    );
    await applyToken(ctx);
    return lines.join("");
  };

  test("the planned token is updated", async () => {
    const token = emulator.addToken({ name: "planned-a", description: "old" });
    await apply({ GPUCLOUD_TOKEN_NAME: "planned-a", GPUCLOUD_TOKEN_DESCRIPTION: "new", GPUCLOUD_TOKEN_PLANNED: ` ${token.id}` });
    expect(emulator.tokens().find((t) => t.id === token.id)?.description).toBe("new");
  });

  test("another token under the name since the plan: refused before any write", async () => {
    const planned = emulator.addToken({ name: "planned-b", description: "old" });
    emulator.deleteToken(planned.id);
    const other = emulator.addToken({ name: "planned-b", description: "old" });
    await expect(
      apply({ GPUCLOUD_TOKEN_NAME: "planned-b", GPUCLOUD_TOKEN_DESCRIPTION: "new", GPUCLOUD_TOKEN_PLANNED: ` ${planned.id}` }),
    ).rejects.toThrow(
      `the plan showed API token id ${planned.id} for "planned-b" (the ApiToken "stack/ci"), the id its consumers were planned with, ` +
        `but it would now apply API token ${other.id} ("planned-b")`,
    );
    expect(emulator.tokens().find((t) => t.id === other.id)?.description).toBe("old");
  });

  test("the planned token gone: no token is created", async () => {
    const before = emulator.tokens().length;
    await expect(apply({ GPUCLOUD_TOKEN_NAME: "planned-c", GPUCLOUD_TOKEN_PLANNED: " tok_gone" })).rejects.toThrow(
      "but no such token exists any more: it was revoked, renamed or replaced since the plan. Nothing was changed; run terraform plan again.",
    );
    expect(emulator.tokens()).toHaveLength(before);
  });

  test("no planned id (a create): created as before", async () => {
    await apply({ GPUCLOUD_TOKEN_NAME: "planned-d", GPUCLOUD_TOKEN_PLANNED: " " });
    expect(emulator.tokens().filter((t) => t.name === "planned-d")).toHaveLength(1);
  });
});

describe("token-roster-release", () => {
  const release = async (was: object, now: { paths: string[]; names: string[] }) => {
    const lines: string[] = [];
    await releaseRoster(context({ GPUCLOUD_ROSTER_WAS: JSON.stringify(was), GPUCLOUD_ROSTER_NOW: JSON.stringify(now) }, lines));
    return lines.join("").replace(/\s+/g, " ");
  };
  const was = { "s/a": { name: "a" }, "s/b": { name: "b", env_prefix: "GPUCLOUD_PROD_" } };

  test("a removed ApiToken: one warning naming its name, path and account", async () => {
    const log = await release(was, { paths: ["s/a"], names: ["a"] });
    expect(log).toBe(
      'gpucloud: WARNING: API token "b" on the account GPUCLOUD_PROD_* stays ACTIVE: the ApiToken "s/b" was removed from the stack, ' +
        'and the GPU cloud API has no delete operation. Revoke it in the cloud console if nothing uses it; an ApiToken with the name "b" would adopt it again. ',
    );
  });

  test("an ApiToken added: the roster is replaced, nothing to say", async () => {
    expect(await release(was, { paths: ["s/a", "s/b", "s/c"], names: ["a", "b", "c"] })).toBe("");
  });

  test("a token moved to another path under its name or a previous name (adopted or renamed there): nothing to say", async () => {
    expect(await release(was, { paths: ["s/a", "s/moved"], names: ["a", "B ", "c"] })).toBe("");
  });

  test("the same paths: the stack is being destroyed, every token stays active", async () => {
    const log = await release(was, { paths: ["s/b", "s/a"], names: ["a", "b"] });
    expect(log.match(/WARNING/g)).toHaveLength(2);
    expect(log).toContain('API token "a" on the account GPUCLOUD_* stays ACTIVE: the stack is being destroyed');
  });

  test("the last ApiToken gone (count 0): every token stays active", async () => {
    expect((await release(was, { paths: [], names: [] })).match(/was removed from the stack/g)).toHaveLength(2);
  });
});
