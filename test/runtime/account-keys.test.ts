/**
 * Hand-offs, applied records and name locks are keyed by account (variable prefix and API
 * address): two accounts on one address never share them.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { accountDigest } from "../../src/runtime/account-identity";
import { nameLockPath } from "../../src/runtime/locks/name-lock";
import { readAppliedRecord } from "../../src/runtime/records/applied-record";
import { applyToken } from "../../src/runtime/tokens/token-apply";
import { releaseToken } from "../../src/runtime/tokens/token-release";
import type { RuntimeContext } from "../../src/shared/context";
import { createOutput, Redactor } from "../../src/shared/output";
import { provisionerEnv } from "../support/provisioner-env";

const A = { username: "keys-a", password: "keys-a-password-1", account: "a" };
const B = { username: "keys-b", password: "keys-b-password-2", account: "b" };
const KEY = "c8accounts";

describe("keys per account", () => {
  test("another prefix on one address has its own keys; the default prefix is the default account's", () => {
    const url = "https://api.example.com/v1";
    expect(accountDigest("GPUCLOUD_PROD_", url)).not.toBe(accountDigest("GPUCLOUD_", url));
    expect(accountDigest("GPUCLOUD_PROD_", "HTTPS://API.example.com/v1/")).toBe(accountDigest("GPUCLOUD_PROD_", url));
    expect(nameLockPath("/s", url, "ci", "GPUCLOUD_")).toBe(nameLockPath("/s", url, "ci"));
    expect(nameLockPath("/s", url, "ci", "GPUCLOUD_PROD_")).not.toBe(nameLockPath("/s", url, "ci"));
  });

  describe("provisioners", () => {
    let emulator: RunningEmulator;
    beforeAll(async () => {
      emulator = await startEmulator({ users: [A, B] });
    });
    afterAll(() => emulator?.close());

    const run = async (cmd: typeof applyToken, cwd: string, runId: string, env: Record<string, string>): Promise<string> => {
      const lines: string[] = [];
      const ctx: RuntimeContext = {
        cwd,
        out: createOutput((t) => lines.push(t), new Redactor([A.password, B.password])),
        env: provisionerEnv({
          GPUCLOUD_BASE_URL: emulator.url,
          GPUCLOUD_USERNAME: A.username,
          GPUCLOUD_PASSWORD: A.password,
          GPUCLOUD_B_BASE_URL: emulator.url,
          GPUCLOUD_B_USERNAME: B.username,
          GPUCLOUD_B_PASSWORD: B.password,
          GPUCLOUD_TIMEOUT_SECONDS: "10",
          GPUCLOUD_TOKEN_KEY: KEY,
          GPUCLOUD_TOKEN_WORKSPACE: "default",
          GPUCLOUD_TOKEN_PATH: "stack/ci",
          GPUCLOUD_TOKEN_PLAN_TIME: runId,
          ...env,
        }),
      };
      await cmd(ctx);
      return lines.join("").replace(/\s+/g, " ");
    };

    test("a construct moved to another account on one address, in one run: a new token there, the old one named as still active", async () => {
      const cwd = mkdtempSync(path.join(tmpdir(), "account-keys-"));
      await run(applyToken, cwd, "1@1", { GPUCLOUD_TOKEN_NAME: "moving" });
      const old = emulator.tokens().find((t) => t.account === "a" && t.name === "moving")!;
      await run(releaseToken, cwd, "2@2", { GPUCLOUD_TOKEN_NAME: "moving" });
      const log = await run(applyToken, cwd, "2@2", { GPUCLOUD_TOKEN_NAME: "moving", GPUCLOUD_TOKEN_ENV_PREFIX: "GPUCLOUD_B_" });
      expect(log).toContain(
        `API token "moving" (id ${old.id}) was released on another account or API address than this one (account GPUCLOUD_B_*)`,
      );
      expect(
        emulator
          .tokens()
          .filter((t) => t.name === "moving")
          .map((t) => t.account)
          .sort(),
      ).toEqual(["a", "b"]);
      expect(readAppliedRecord(cwd, "default", KEY, () => undefined)).toMatchObject({ api: accountDigest("GPUCLOUD_B_", emulator.url) });
    });

    test("under create_before_destroy (no release), the record of the other account is reported, never followed", async () => {
      const cwd = mkdtempSync(path.join(tmpdir(), "account-keys-"));
      await run(applyToken, cwd, "3@3", { GPUCLOUD_TOKEN_NAME: "cbd-old" });
      const old = emulator.tokens().find((t) => t.account === "a" && t.name === "cbd-old")!;
      const log = await run(applyToken, cwd, "4@4", { GPUCLOUD_TOKEN_NAME: "cbd-new", GPUCLOUD_TOKEN_ENV_PREFIX: "GPUCLOUD_B_" });
      expect(log).toContain(
        `WARNING: API token "cbd-old" (id ${old.id}), which the ApiToken "stack/ci" managed on another account or API address, stays ACTIVE there`,
      );
      expect(emulator.tokens().find((t) => t.id === old.id)?.name).toBe("cbd-old");
      expect(
        emulator
          .tokens()
          .filter((t) => t.name === "cbd-new")
          .map((t) => t.account),
      ).toEqual(["b"]);
    });
  });
});
