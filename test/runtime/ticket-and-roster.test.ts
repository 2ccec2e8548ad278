/**
 * The run's ticket, and the roster's destroy-time command, which reports the tokens a stack no
 * longer manages from its environment alone.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { decodeRunTicket, encodeRunTicket } from "../../src/protocol";
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

describe("the run's ticket", () => {
  test("carries the plan's accounts and where its walks ended; anything else is no ticket", () => {
    const ticket = { accounts: ["aaaaaaaaaaaa", "bbbbbbbbbbbb"], marks: { aaaaaaaaaaaa: { createdAt: 1_795_000_000, ids: ["tok_1"] } } };
    expect(decodeRunTicket(encodeRunTicket(ticket))).toEqual(ticket);
    // Without accounts (not checked) and without marks.
    expect(decodeRunTicket(encodeRunTicket({}))).toEqual({ marks: {} });
    expect(decodeRunTicket(undefined)).toBeUndefined();
    expect(decodeRunTicket("abc.-.-/x")).toBeUndefined();
    expect(decodeRunTicket('{"accounts":"x"}')).toBeUndefined();
    // A damaged mark is dropped, not trusted.
    expect(decodeRunTicket('{"marks":{"a":{"createdAt":"x","ids":[]}}}')).toEqual({ marks: {} });
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
