/**
 * A run the API keeps throttling, run as Terraform runs it (the bundled script): it fails within
 * its budget with a message that names the limit the server gave and what the user can change.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { md5Hex, type RunningEmulator, startEmulator } from "../../src/emulator";
import { runProcess, SCRIPT_NODE, SCRIPT_PATH } from "../support/processes";

const BUNDLE = path.join(__dirname, "..", "..", "lib", "assets", "gpucloud-tf.js");
const USER = { username: "throttled-bot", password: "throttled-pw-51c2" };

describe("a run the API keeps throttling", () => {
  let emulator: RunningEmulator;
  const cwd = mkdtempSync(path.join(tmpdir(), "rate-limited-"));

  beforeAll(async () => {
    emulator = await startEmulator({ users: [USER], rateLimit: { loginsPerMinute: 1 } });
  });
  afterAll(async () => {
    await emulator?.close();
  });

  test("logins refused with 429: the error names the server's limit, GPUCLOUD_TIMEOUT_SECONDS and an API token instead of the password", async () => {
    // Someone else (another job of the same user) took this minute's login.
    const taken = await fetch(`${emulator.url}/authenticate/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: USER.username, password: md5Hex(USER.password) }),
    });
    expect(taken.status).toBe(200);
    const started = Date.now();
    const ran = await runProcess(SCRIPT_NODE, [BUNDLE, "stack-read"], {
      cwd,
      env: {
        PATH: SCRIPT_PATH,
        GPUCLOUD_BASE_URL: emulator.url,
        GPUCLOUD_USERNAME: USER.username,
        GPUCLOUD_PASSWORD: USER.password,
        GPUCLOUD_TIMEOUT_SECONDS: "5",
      },
      stdin: JSON.stringify({ "t0.name": "ci" }),
    });
    expect(ran.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
    const message = ran.stderr.replace(/\s+/g, " ");
    expect(message).toMatch(/HTTP 429 from POST \/authenticate\/login: rate limit exceeded: at most 1 logins per minute per user/);
    expect(message).toContain(
      "The API kept answering 429 (rate limited): to wait longer, raise GPUCLOUD_TIMEOUT_SECONDS (now 5 s); and set GPUCLOUD_API_TOKEN " +
        "instead of GPUCLOUD_USERNAME and a password",
    );
    expect(message).not.toContain(USER.password);
  });
});
