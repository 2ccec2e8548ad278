/**
 * One login per account for the scripts of one terraform run (issue 24): clients of one run share
 * a sealed session file; clients that start together wait for the one that logs in; a rejected
 * session, another run or another password means a login of its own; nothing readable is written.
 */
import { mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ApiClient } from "../../src/client/client";
import { md5HexOfUtf8 } from "../../src/client/md5";
import { openNodeHttpSender } from "../../src/client/node-http-sender";
import { startEmulator, type RunningEmulator } from "../../src/emulator";
import { apiDigest } from "../../src/runtime/handoff";
import { removeEarlierRunFiles } from "../../src/runtime/run-files";
import { runSessionStore } from "../../src/runtime/run-session";

const USER = { username: "session-bot", password: "session-password-19af" };
const RUN = "2026-11-01T10:00:00Z";

describe("the run's shared session", () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ users: [USER, { username: "other-bot", password: "other-password-7d" }] });
  });
  afterAll(() => emulator?.close());

  const folder = () => mkdtempSync(path.join(tmpdir(), "run-session-"));
  const client = (cwd: string, run: string = RUN, user: { username: string; password: string } = USER, lines: string[] = []) =>
    new ApiClient(
      {
        baseUrl: emulator.url,
        credentials: { username: user.username, password: user.password },
        totalTimeoutMs: 10_000,
        logger: (l) => lines.push(l),
        sessionStore: runSessionStore(cwd, run, apiDigest(emulator.url), {
          waitMs: 10_000,
          staleAfterMs: 60_000,
          onWait: () => undefined,
          warn: () => undefined,
        }),
      },
      openNodeHttpSender,
    );
  const use = async (c: ApiClient) => {
    try {
      await c.listTokens({ limit: 1 });
    } finally {
      await c.close();
    }
  };

  test("clients of one run log in once, also when they start together; the file holds nothing readable", async () => {
    const cwd = folder();
    emulator.resetStats();
    const lines: string[] = [];
    await Promise.all(Array.from({ length: 6 }, () => use(client(cwd, RUN, USER, lines))));
    await use(client(cwd, RUN, USER, lines));
    expect(emulator.stats().logins).toBe(1);
    expect(lines.filter((l) => l.startsWith("logged in as"))).toHaveLength(1);
    expect(lines.filter((l) => l.includes("that this terraform run logged in with"))).toHaveLength(6);

    const files = readdirSync(path.join(cwd, ".gpucloud-handoff"));
    expect(files).toEqual([expect.stringMatching(/^session-[0-9a-f]{24}\.json$/)]);
    const text = readFileSync(path.join(cwd, ".gpucloud-handoff", files[0]), "utf8");
    // Sealed: the run id in the clear (for clean-up), the rest ciphertext; no JWT, no field name, no credential.
    const sealed = JSON.parse(text) as Record<string, string>;
    expect(Object.keys(sealed).sort()).toEqual(["data", "iv", "run", "salt", "tag"]);
    expect(sealed.run).toBe(RUN);
    const data = Buffer.from(sealed.data, "base64").toString("latin1");
    for (const clear of [text, data]) {
      for (const secret of [USER.password, md5HexOfUtf8(USER.password), USER.username, "eyJ", "accessToken", "refreshToken"]) {
        expect(clear).not.toContain(secret);
      }
    }
  });

  test("another run, another user or another password logs in on its own", async () => {
    const cwd = folder();
    emulator.resetStats();
    await use(client(cwd));
    await use(client(cwd, "2026-11-01T10:05:00Z"));
    await use(client(cwd, RUN, { username: "other-bot", password: "other-password-7d" }));
    expect(emulator.stats().logins).toBe(3);
    // A wrong password cannot open what the right one sealed: it logs in (and is refused by the API).
    await expect(use(client(cwd, RUN, { username: USER.username, password: "wrong" }))).rejects.toThrow(/login as session-bot failed/);
    expect(emulator.stats().logins).toBe(3);
  });

  test("a session the API rejects is replaced by one login, which the others then share", async () => {
    const cwd = folder();
    await use(client(cwd));
    emulator.expireAccessTokens();
    emulator.resetStats();
    await use(client(cwd));
    await use(client(cwd));
    expect(emulator.stats().logins).toBe(1);
  });

  test("a folder the store cannot use costs a login of its own, with a warning, never the command", async () => {
    const cwd = folder();
    // A file where the hand-off folder should be: no lock, no session file can be made there.
    writeFileSync(path.join(cwd, ".gpucloud-handoff"), "not a folder");
    const warnings: string[] = [];
    const c = new ApiClient(
      {
        baseUrl: emulator.url,
        credentials: { username: USER.username, password: USER.password },
        totalTimeoutMs: 10_000,
        sessionStore: runSessionStore(cwd, RUN, apiDigest(emulator.url), {
          waitMs: 1_000,
          staleAfterMs: 60_000,
          onWait: () => undefined,
          warn: (l) => warnings.push(l),
        }),
      },
      openNodeHttpSender,
    );
    await expect(use(c)).resolves.toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining("could not share this run's login")]);
  });

  test("the plan-time read removes the sessions of earlier runs", async () => {
    const cwd = folder();
    await use(client(cwd, "2026-11-01T09:00:00Z"));
    await use(client(cwd));
    expect(readdirSync(path.join(cwd, ".gpucloud-handoff"))).toHaveLength(2);
    // A temporary file a killed writer left: dropped once an hour old.
    const tmp = path.join(cwd, ".gpucloud-handoff", "walk-0123.json.999.tmp");
    writeFileSync(tmp, "{}");
    expect(removeEarlierRunFiles(cwd, RUN)).toBe(1);
    const old = new Date(Date.now() - 2 * 60 * 60_000);
    utimesSync(tmp, old, old);
    expect(removeEarlierRunFiles(cwd, RUN)).toBe(1);
    // Its own run's session stays (another workspace may be applying under it): no login.
    emulator.resetStats();
    await use(client(cwd));
    expect(emulator.stats().logins).toBe(0);
  });
});
