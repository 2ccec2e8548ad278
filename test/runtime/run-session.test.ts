/**
 * One login per account for the scripts of one terraform run: clients of one run share a session
 * file in the run's private folder (outside the stack folder); clients that start together wait for
 * the one that logs in; a rejected session, another run or another user means a login of its own;
 * the file holds only what expires, nothing derived from the password. And the sweep of lapsed run
 * folders, which touches nothing but this user's own folders and files.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { ApiClient } from "../../src/client/client";
import { md5HexOfUtf8 } from "../../src/client/md5";
import { openNodeHttpSender } from "../../src/client/node-http-sender";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RunTicket } from "../../src/protocol";
import { credentialIdentity } from "../../src/runtime/account-identity";
import { randomHex } from "../../src/runtime/io/crypto";
import { openRunFolder, sweepRunFolders } from "../../src/runtime/run/run-folder";
import { runSessionStore } from "../../src/runtime/run/run-session";
import { runParentIn } from "../support/run-folders";

const USER = { username: "session-bot", password: "session-password-19af" };
const OTHER = { username: "other-bot", password: "other-password-7d" };
// The API answers this user's login with another spelling of the name.
const SPELLED = { username: "Acme-Bot", password: "acme-password-5c", answersAs: "acme-bot" };
const MINUTE = 60_000;

describe("the run's shared session", () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ users: [USER, OTHER, SPELLED] });
  });
  afterAll(() => emulator?.close());

  /** A temp folder and a home of its own, so that runs of tests never meet. */
  const world = () => ({
    env: {
      TMPDIR: mkdtempSync(path.join(tmpdir(), "run-session-")),
      HOME: mkdtempSync(path.join(tmpdir(), "run-session-home-")),
    } as NodeJS.ProcessEnv,
  });
  const runFolder = (w: World, t: RunTicket) => path.join(runParentIn(w.env.TMPDIR!), t.id);
  type World = ReturnType<typeof world>;
  const ticket = (): RunTicket => ({ id: randomHex(16) });
  interface Run {
    readonly ticket: RunTicket;
    readonly user?: { username: string; password: string };
    readonly lines?: string[];
    readonly warnings?: string[];
  }
  const client = (w: World, run: Run) => {
    const user = run.user ?? USER;
    const credentials = { username: user.username, password: user.password };
    return new ApiClient(
      {
        baseUrl: emulator.url,
        credentials,
        totalTimeoutMs: 10_000,
        logger: (l) => run.lines?.push(l),
        sessionStore: runSessionStore(
          run.ticket,
          { identity: credentialIdentity(credentials), envPrefix: "GPUCLOUD_", apiUrl: emulator.url },
          { env: w.env, waitMs: 10_000, leaseMs: 10 * MINUTE, onWait: () => undefined, warn: (l) => run.warnings?.push(l) },
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

  test("clients of one run log in once, also when they start together; the file is 0600 in the run's own 0700 folder", async () => {
    const w = world();
    const run = { ticket: ticket(), lines: [] as string[] };
    emulator.resetStats();
    await Promise.all(Array.from({ length: 6 }, () => use(client(w, run))));
    await use(client(w, run));
    expect(emulator.stats().logins).toBe(1);
    expect(run.lines.filter((l) => l.startsWith("logged in as"))).toHaveLength(1);
    expect(run.lines.filter((l) => l.includes("that this terraform run logged in with"))).toHaveLength(6);

    const folder = runFolder(w, run.ticket);
    expect(path.basename(path.dirname(folder))).toBe(`gpucloud-${process.getuid?.()}`);
    expect(statSync(path.dirname(folder)).mode & 0o777).toBe(0o700);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    const files = readdirSync(folder).sort();
    expect(files).toEqual(["lease", expect.stringMatching(/^[0-9a-f]{16}\.session\.json$/)].sort());
    const session = path.join(
      folder,
      files.find((f) => f.endsWith(".session.json"))!,
    );
    expect(statSync(session).mode & 0o777).toBe(0o600);
    // What expires, in the clear; nothing of the password.
    const text = readFileSync(session, "utf8");
    expect(Object.keys(JSON.parse(text) as object).sort()).toEqual(["accessToken", "email", "refreshToken", "renewAt", "username"]);
    for (const secret of [USER.password, md5HexOfUtf8(USER.password)]) expect(text).not.toContain(secret);
  });

  test("another run or another user logs in on its own", async () => {
    const w = world();
    const first = ticket();
    emulator.resetStats();
    await use(client(w, { ticket: first }));
    await use(client(w, { ticket: ticket() }));
    await use(client(w, { ticket: first, user: OTHER }));
    await use(client(w, { ticket: first }));
    expect(emulator.stats().logins).toBe(3);
  });

  test("one login whatever spelling of the username the API answers with", async () => {
    const w = world();
    const run = { ticket: ticket(), user: SPELLED };
    emulator.resetStats();
    for (let i = 0; i < 4; i++) await use(client(w, run));
    expect(emulator.stats().logins).toBe(1);
  });

  test("a session the API rejects is replaced by one login, which the others then share", async () => {
    const w = world();
    const run = { ticket: ticket() };
    await use(client(w, run));
    emulator.expireAccessTokens();
    emulator.resetStats();
    await use(client(w, run));
    await use(client(w, run));
    expect(emulator.stats().logins).toBe(1);
  });

  test("a run folder that is not this user's own is not used: a login of its own, with a warning, never the command", async () => {
    const w = world();
    const parent = runParentIn(w.env.TMPDIR!);
    mkdirSync(parent, { mode: 0o700 });
    const run = { ticket: ticket(), warnings: [] as string[] };
    const folder = runFolder(w, run.ticket);
    mkdirSync(folder, { mode: 0o700 });
    chmodSync(folder, 0o777);
    await expect(use(client(w, run))).resolves.toBeUndefined();
    expect(run.warnings).toEqual([expect.stringMatching(/could not share this run's login \(.*open to other users \(mode 777\)\)/)]);
    expect(readdirSync(folder)).toEqual([]);

    const asFile = { ticket: ticket(), warnings: [] as string[] };
    writeFileSync(runFolder(w, asFile.ticket), "not a folder");
    await expect(use(client(w, asFile))).resolves.toBeUndefined();
    expect(asFile.warnings).toEqual([expect.stringContaining("is not a folder")]);

    // A link where the run's folder would be: not followed, nothing written where it points.
    const target = mkdtempSync(path.join(tmpdir(), "victim-"));
    const linked = { ticket: ticket(), warnings: [] as string[] };
    symlinkSync(target, runFolder(w, linked.ticket));
    await expect(use(client(w, linked))).resolves.toBeUndefined();
    expect(linked.warnings).toEqual([expect.stringContaining("is not a folder")]);
    expect(readdirSync(target)).toEqual([]);
  });

  test.each([
    ["a folder open to all", (at: string) => mkdirSync(at, { mode: 0o777 })],
    ["a link to a folder of the user's", (at: string) => symlinkSync(mkdtempSync(path.join(tmpdir(), "victim-")), at)],
    ["a file", (at: string) => writeFileSync(at, "")],
  ])(
    "the temp folder's gpucloud-<uid> squatted (%s): the run uses a private folder of the home, and still logs in once",
    async (_what, squat) => {
      const w = world();
      squat(runParentIn(w.env.TMPDIR!));
      if (_what === "a folder open to all") chmodSync(runParentIn(w.env.TMPDIR!), 0o777);
      const run = { ticket: ticket(), warnings: [] as string[] };
      emulator.resetStats();
      for (let i = 0; i < 3; i++) await use(client(w, run));
      expect(emulator.stats().logins).toBe(1);
      expect(run.warnings).toEqual([]);
      const fallback = path.join(w.env.HOME!, ".cache", "gpucloud", "runs", run.ticket.id);
      expect(statSync(fallback).mode & 0o777).toBe(0o700);
      expect(readdirSync(fallback).some((f) => f.endsWith(".session.json"))).toBe(true);
    },
  );

  test("a temp folder others may write without a sticky bit is not used; nor is anything, without a home", () => {
    const base = mkdtempSync(path.join(tmpdir(), "open-tmp-"));
    chmodSync(base, 0o777);
    const home = mkdtempSync(path.join(tmpdir(), "run-session-home-"));
    expect(openRunFolder({ TMPDIR: base, HOME: home }, ticket(), MINUTE).startsWith(path.join(home, ".cache"))).toBe(true);
    expect(() => openRunFolder({ TMPDIR: base }, ticket(), MINUTE)).toThrow(
      /no private folder for this run: .*writable by other users and has no sticky bit \(set TMPDIR to a folder of your own\)/,
    );
    chmodSync(base, 0o1777);
    expect(openRunFolder({ TMPDIR: base }, ticket(), MINUTE).startsWith(base)).toBe(true);
  });

  test("a folder made by a run is 0700 whatever the umask", () => {
    const w = world();
    const previous = process.umask(0o277);
    try {
      const folder = openRunFolder(w.env, ticket(), MINUTE);
      expect(statSync(folder).mode & 0o777).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });
});

describe("the sweep of lapsed run folders", () => {
  const world = () => ({ TMPDIR: mkdtempSync(path.join(tmpdir(), "run-sweep-")) }) as NodeJS.ProcessEnv;
  const now = Date.now();

  test("removes the folders whose lease lapsed, keeps the live ones, and the expired sessions in them", () => {
    const env = world();
    const lapsed = openRunFolder(env, { id: randomHex(16) }, MINUTE, now - 2 * MINUTE);
    writeFileSync(path.join(lapsed, "0123456789abcdef.walk.json"), "{}");
    const live = openRunFolder(env, { id: randomHex(16) }, 10 * MINUTE, now);
    const oldSession = path.join(live, "0123456789abcdef.session.json");
    const freshSession = path.join(live, "fedcba9876543210.session.json");
    writeFileSync(oldSession, "{}");
    writeFileSync(freshSession, "{}");
    const threeHours = new Date(now - 3 * 60 * MINUTE);
    utimesSync(oldSession, threeHours, threeHours);
    const warn = jest.fn();
    expect(sweepRunFolders(env, warn, now)).toBe(1);
    expect(existsSync(lapsed)).toBe(false);
    expect(readdirSync(live).sort()).toEqual(["fedcba9876543210.session.json", "lease"]);
    expect(warn).not.toHaveBeenCalled();
  });

  test("a lease renewed by a later script of the run keeps the folder; each script renews by its own bound", () => {
    const env = world();
    const run = { id: randomHex(16) };
    const folder = openRunFolder(env, run, MINUTE, now - 2 * MINUTE);
    // A script with an hour's budget opens it: its lease holds the folder for that hour.
    openRunFolder(env, run, 61 * MINUTE, now - MINUTE);
    // A shorter one later does not shorten it.
    openRunFolder(env, run, MINUTE, now - MINUTE);
    expect(sweepRunFolders(env, () => undefined, now + 30 * MINUTE)).toBe(0);
    expect(existsSync(folder)).toBe(true);
    expect(sweepRunFolders(env, () => undefined, now + 61 * MINUTE)).toBe(1);
  });

  test("never follows a link, in place of the parent or of a run folder, and touches no folder open to others", () => {
    const victim = () => {
      const folder = mkdtempSync(path.join(tmpdir(), "victim-"));
      for (const f of [".terraform.lock.hcl", "yarn.lock", "poetry.lock", "report.tmp"]) writeFileSync(path.join(folder, f), "x");
      writeFileSync(path.join(folder, "lease"), "0");
      mkdirSync(path.join(folder, randomHex(16)));
      return folder;
    };
    const files = (folder: string) => readdirSync(folder).sort();
    // The parent a link to a folder of the user's (files that look like locks and temporaries, a lapsed run folder).
    const env = world();
    const pointedAt = victim();
    const before = files(pointedAt);
    symlinkSync(pointedAt, runParentIn(env.TMPDIR!));
    expect(sweepRunFolders(env, () => undefined, now)).toBe(0);
    expect(files(pointedAt)).toEqual(before);
    // In a real parent: a run folder that is a link, and one open to others.
    const other = world();
    const parent = path.dirname(openRunFolder(other, { id: randomHex(16) }, 10 * MINUTE, now));
    const linkedTo = victim();
    symlinkSync(linkedTo, path.join(parent, randomHex(16)));
    const open = path.join(parent, randomHex(16));
    mkdirSync(open);
    chmodSync(open, 0o777);
    writeFileSync(path.join(open, "lease"), "0");
    writeFileSync(path.join(open, "x.walk.json"), "{}");
    const linkedBefore = files(linkedTo);
    expect(sweepRunFolders(other, () => undefined, now)).toBe(0);
    expect(files(linkedTo)).toEqual(linkedBefore);
    expect(files(open)).toEqual(["lease", "x.walk.json"]);
  });

  test("removes only regular files of this user: a link inside stays, and so does the folder, with one warning", () => {
    const env = world();
    const folder = openRunFolder(env, { id: randomHex(16) }, MINUTE, now - 2 * MINUTE);
    const victim = mkdtempSync(path.join(tmpdir(), "victim-"));
    writeFileSync(path.join(victim, "keep.lock"), "x");
    symlinkSync(victim, path.join(folder, "linked"));
    const warn = jest.fn();
    expect(sweepRunFolders(env, warn, now)).toBe(0);
    expect(readdirSync(victim)).toEqual(["keep.lock"]);
    expect(readdirSync(folder)).toEqual(["linked"]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(/could not remove a spent run folder .*going on/);
  });
});
