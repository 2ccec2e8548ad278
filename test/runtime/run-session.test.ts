/**
 * One login per account for the scripts of one terraform run: clients of one run share a session
 * file in the user's run folder (outside the stack folder); clients that start together wait for
 * the one that logs in; a rejected session, another run, workspace, user or stack folder means a
 * login of its own; the file holds only what expires, nothing derived from the password.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { ApiClient } from "../../src/client/client";
import { md5HexOfUtf8 } from "../../src/client/md5";
import { openNodeHttpSender } from "../../src/client/node-http-sender";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { credentialIdentity } from "../../src/runtime/account-identity";
import { runFolderPath, sweepRunFolder } from "../../src/runtime/run/run-folder";
import { runSessionStore } from "../../src/runtime/run/run-session";

const USER = { username: "session-bot", password: "session-password-19af" };
const OTHER = { username: "other-bot", password: "other-password-7d" };
const NONCE = "nonce-of-run-1";

describe("the run's shared session", () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ users: [USER, OTHER] });
  });
  afterAll(() => emulator?.close());

  /** A stack folder and a temp folder of its own (TMPDIR), so that runs of tests never meet. */
  const world = () => {
    const root = mkdtempSync(path.join(tmpdir(), "run-session-"));
    mkdirSync(path.join(root, "stack"));
    mkdirSync(path.join(root, "tmp"));
    return { cwd: path.join(root, "stack"), env: { TMPDIR: path.join(root, "tmp") } as NodeJS.ProcessEnv };
  };
  type World = ReturnType<typeof world>;
  interface Run {
    readonly nonce?: string;
    readonly workspace?: string;
    readonly user?: { username: string; password: string };
    readonly lines?: string[];
    readonly warnings?: string[];
  }
  const client = (w: World, run: Run = {}) => {
    const user = run.user ?? USER;
    return new ApiClient(
      {
        baseUrl: emulator.url,
        credentials: { username: user.username, password: user.password },
        totalTimeoutMs: 10_000,
        logger: (l) => run.lines?.push(l),
        sessionStore: runSessionStore(
          {
            cwd: w.cwd,
            workspace: run.workspace ?? "default",
            nonce: run.nonce ?? NONCE,
            identity: credentialIdentity({ username: user.username, password: user.password }),
            envPrefix: "GPUCLOUD_",
            apiUrl: emulator.url,
          },
          { env: w.env, waitMs: 10_000, staleAfterMs: 60_000, onWait: () => undefined, warn: (l) => run.warnings?.push(l) },
        ),
      },
      openNodeHttpSender,
    );
  };
  const use = async (c: ApiClient) => {
    try {
      await c.listTokens({ limit: 1 });
    } finally {
      await c.close();
    }
  };

  test("clients of one run log in once, also when they start together; the file is 0600 in a 0700 folder outside the stack folder", async () => {
    const w = world();
    emulator.resetStats();
    const lines: string[] = [];
    await Promise.all(Array.from({ length: 6 }, () => use(client(w, { lines }))));
    await use(client(w, { lines }));
    expect(emulator.stats().logins).toBe(1);
    expect(lines.filter((l) => l.startsWith("logged in as"))).toHaveLength(1);
    expect(lines.filter((l) => l.includes("that this terraform run logged in with"))).toHaveLength(6);

    expect(readdirSync(w.cwd)).toEqual([]);
    const folder = runFolderPath(w.env);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    const files = readdirSync(folder);
    expect(files).toEqual([expect.stringMatching(/^[0-9a-f]{16}-[0-9a-f]{16}-[0-9a-f]{16}\.session\.json$/)]);
    expect(statSync(path.join(folder, files[0])).mode & 0o777).toBe(0o600);
    // What expires, in the clear; nothing of the password.
    const text = readFileSync(path.join(folder, files[0]), "utf8");
    expect(Object.keys(JSON.parse(text) as object).sort()).toEqual(["accessToken", "email", "refreshToken", "renewAt", "username"]);
    for (const secret of [USER.password, md5HexOfUtf8(USER.password)]) expect(text).not.toContain(secret);
  });

  test("another run, workspace, user or stack folder logs in on its own", async () => {
    const w = world();
    emulator.resetStats();
    await use(client(w));
    await use(client(w, { nonce: "nonce-of-run-2" }));
    await use(client(w, { workspace: "prod" }));
    await use(client(w, { user: OTHER }));
    await use(client({ ...world(), env: w.env }));
    expect(emulator.stats().logins).toBe(5);
  });

  test("a session the API rejects is replaced by one login, which the others then share", async () => {
    const w = world();
    await use(client(w));
    emulator.expireAccessTokens();
    emulator.resetStats();
    await use(client(w));
    await use(client(w));
    expect(emulator.stats().logins).toBe(1);
  });

  test("a run folder that is not the user's own is not used: a login of its own, with a warning, never the command", async () => {
    const w = world();
    const folder = runFolderPath(w.env);
    mkdirSync(folder, { mode: 0o700 });
    chmodSync(folder, 0o777);
    const warnings: string[] = [];
    await expect(use(client(w, { warnings }))).resolves.toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/could not share this run's login \(.*open to other users \(mode 777\)\)/)]);
    expect(readdirSync(folder)).toEqual([]);

    const asFile = world();
    writeFileSync(runFolderPath(asFile.env), "not a folder");
    const fileWarnings: string[] = [];
    await expect(use(client(asFile, { warnings: fileWarnings }))).resolves.toBeUndefined();
    expect(fileWarnings).toEqual([expect.stringContaining("could not share this run's login")]);
  });

  test("the next plan of the scope removes the earlier runs' files; any plan removes expired ones and stale locks; other scopes' stay", async () => {
    const w = world();
    await use(client(w, { nonce: "run-a" }));
    await use(client(w, { nonce: "run-b" }));
    await use(client(w, { nonce: "run-a", workspace: "prod" }));
    const folder = runFolderPath(w.env);
    expect(readdirSync(folder)).toHaveLength(3);
    const warn = jest.fn();
    // The plan of run-b in workspace default: run-a's session of that workspace goes, prod's stays.
    expect(sweepRunFolder(w.env, { cwd: w.cwd, workspace: "default", nonce: "run-b" }, warn)).toBe(1);
    expect(readdirSync(folder)).toHaveLength(2);
    emulator.resetStats();
    await use(client(w, { nonce: "run-b" }));
    await use(client(w, { nonce: "run-a", workspace: "prod" }));
    expect(emulator.stats().logins).toBe(0);

    // Past the refresh token's lifetime a session serves no one: removed by a plan of any scope. So is a lock of a killed script.
    const lock = path.join(folder, "0123456789abcdef-0123456789abcdef-0123456789abcdef.session.json.lock");
    writeFileSync(lock, "1\nhost\n");
    const old = new Date(Date.now() - 3 * 60 * 60_000);
    for (const f of readdirSync(folder)) utimesSync(path.join(folder, f), old, old);
    expect(sweepRunFolder(w.env, { cwd: world().cwd, workspace: "default", nonce: "run-c" }, warn)).toBe(3);
    expect(readdirSync(folder)).toEqual([]);
    expect(warn).not.toHaveBeenCalled();
  });

  test("a sweep that cannot remove a file warns once and goes on", () => {
    const w = world();
    const folder = runFolderPath(w.env);
    mkdirSync(folder, { mode: 0o700 });
    // Folders under run files' names: not removable as files, by root either.
    const old = new Date(Date.now() - 24 * 60 * 60_000);
    for (const n of ["0", "1"]) {
      const stuck = path.join(folder, `0123456789abcde${n}-0123456789abcdef-0123456789abcdef.walk.json`);
      mkdirSync(path.join(stuck, "inside"), { recursive: true });
      utimesSync(stuck, old, old);
    }
    const removable = path.join(folder, "0123456789abcdef-0123456789abcdef-0123456789abcdef.session.json");
    writeFileSync(removable, "{}");
    utimesSync(removable, old, old);
    const warn = jest.fn();
    expect(sweepRunFolder(w.env, { cwd: w.cwd, workspace: "default", nonce: "x" }, warn)).toBe(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(/could not remove a spent file of an earlier terraform run .*going on/);
  });
});
