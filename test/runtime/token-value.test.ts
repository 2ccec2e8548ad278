/**
 * valueInState: false in the stack's read, and `token-value`, the command behind ApiToken.ephemeralToken,
 * in-process against the emulator and as the bundled script (stdin JSON in, one JSON object out).
 */
import { spawn } from "node:child_process";
import path from "node:path";

import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { stackRead } from "../../src/runtime/reads/stack-read";
import { tokenValues } from "../../src/runtime/tokens/token-value";
import type { RuntimeContext } from "../../src/shared/context";
import { createOutput, Redactor } from "../../src/shared/output";
import { keepStderr, SCRIPT_NODE, SCRIPT_PATH } from "../support/processes";

const USER = { username: "value-bot", password: "value-password-7e3f" };
const PROD = { username: "value-prod-bot", password: "value-prod-password-1a6c", account: "prod" };
const SCRIPT = path.resolve(__dirname, "..", "..", "lib", "assets", "gpucloud-tf.js");

describe("valueInState: false and token-value", () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ users: [USER, PROD] });
  });
  afterAll(() => emulator?.close());

  const env = () => ({
    GPUCLOUD_BASE_URL: emulator.url,
    GPUCLOUD_USERNAME: USER.username,
    GPUCLOUD_PASSWORD: USER.password,
    GPUCLOUD_TIMEOUT_SECONDS: "10",
    GPUCLOUD_PROD_BASE_URL: emulator.url,
    GPUCLOUD_PROD_USERNAME: PROD.username,
    GPUCLOUD_PROD_PASSWORD: PROD.password,
  });
  const context = (lines: string[]): RuntimeContext => ({
    cwd: process.cwd(),
    env: env(),
    out: createOutput((t) => lines.push(t), new Redactor([USER.password])),
  });

  test("the stack's read leaves the value out of a token with value_in_state=false, and only of that one", async () => {
    const kept = emulator.addToken({ name: "value-kept" });
    const hidden = emulator.addToken({ name: "value-hidden" });
    const result = await stackRead(context([]), { "a.name": "value-kept", "b.name": "value-hidden", "b.value_in_state": "false" });
    expect(result["a.token"]).toBe(kept.token);
    expect(result["b.token"]).toBe("");
    expect(result["b.id"]).toBe(hidden.id);
    expect(result["b.in_sync"]).toBe("true");
    expect(JSON.stringify(result)).not.toContain(hidden.token);
  });

  test("token-value finds each token by id, whatever its name, one list walk per base URL; an unknown id is an error without any value", async () => {
    const a = emulator.addToken({ name: "value-by-id-a" });
    const b = emulator.addToken({ name: "value-by-id-b" });
    const walks = () => emulator.stats().byRoute["GET /api-tokens"] ?? 0;
    const before = walks();
    await expect(tokenValues(context([]), { "ka.id": a.id, "kb.id": b.id, "kb.base_url": emulator.url })).resolves.toEqual({
      ka: a.token,
      kb: b.token,
    });
    // Two groups (no base URL, and the same URL spelled out): one walk each, of one page here.
    expect(walks() - before).toBe(2);
    await expect(tokenValues(context([]), { "ka.id": a.id })).resolves.toEqual({ ka: a.token });
    const missing = tokenValues(context([]), { "ka.id": a.id, "kx.id": "tok_missing" });
    await expect(missing).rejects.toThrow(/no API token has the id "tok_missing"/);
    await expect(missing).rejects.not.toThrow(a.token);
    await expect(tokenValues(context([]), { "ka.id": " " })).rejects.toThrow(/query\.ka\.id is required/);
    await expect(tokenValues(context([]), { "ka.name": "x" })).rejects.toThrow(
      /is not of the form <token key>\.<id\|base_url\|env_prefix>/,
    );
  });

  test("token-value reads a token of another account with that account's variables (env_prefix)", async () => {
    const here = emulator.addToken({ name: "value-account" });
    const prod = emulator.addToken({ name: "value-account", account: "prod" });
    await expect(tokenValues(context([]), { "kd.id": here.id, "kp.id": prod.id, "kp.env_prefix": "GPUCLOUD_PROD_" })).resolves.toEqual({
      kd: here.token,
      kp: prod.token,
    });
    // The default account's credentials do not see the other account's token.
    await expect(tokenValues(context([]), { "kp.id": prod.id })).rejects.toThrow(/no API token has the id/);
    await expect(tokenValues(context([]), { "kp.id": prod.id, "kp.env_prefix": "lower_" })).rejects.toThrow(
      /environment prefix must be upper-case/,
    );
  });

  /** The script as local_command runs it (asynchronously: the emulator answers from this process). */
  const runScript = (input: string): Promise<{ status: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      const child = spawn(SCRIPT_NODE, [SCRIPT, "token-value"], { env: { PATH: SCRIPT_PATH, ...env() } });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
      child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
      child.on("close", (status) => {
        keepStderr(stderr);
        resolve({ status, stdout, stderr });
      });
      child.stdin.end(input);
    });

  test("the bundled script: the query on stdin, one JSON object on stdout, the value never on stderr", async () => {
    const t = emulator.addToken({ name: "value-script" });
    const res = await runScript(JSON.stringify({ "k1.id": t.id }));
    expect(res.status).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ k1: t.token });
    expect(res.stderr).not.toContain(t.token);
    expect(res.stderr).not.toContain(USER.password);
  });
});
