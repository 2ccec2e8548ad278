/**
 * Breaking a stale name lock: only one waiter may break a given lock, and a waiter that judged a
 * lock stale never deletes the fresh lock that took its place.
 */
import { spawnSync } from "node:child_process";
import type * as FsModule from "node:fs";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";

import { ABANDONED_BREAK_MS } from "../../src/runtime/locks/file-lock";
import { MIN_LEASE_MS } from "../../src/runtime/locks/lock-bounds";
import { nameLockPath, withNameLock } from "../../src/runtime/locks/name-lock";
import { bundleProgram, runProcess } from "../support/processes";

// The module object itself (not an import namespace), so that its functions can be spied on.
const fs = require("node:fs") as typeof FsModule;
const API = "https://api.example.com";
const folder = () => mkdtempSync(path.join(tmpdir(), "name-lock-"));

/** A lock file left by a process of this host that is gone. */
function deadLock(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const gone = spawnSync(process.execPath, ["-e", ""]).pid;
  writeFileSync(file, `${gone}\n${hostname()}\n`);
}

describe("name lock: breaking a stale lock", () => {
  afterEach(() => jest.restoreAllMocks());

  test("a waiter that judged a lock stale does not delete the fresh lock another waiter took meanwhile", async () => {
    const cwd = folder();
    const file = nameLockPath(cwd, API, "ci");
    deadLock(file);
    const fresh = `${process.pid}\n${hostname()}\nother-waiter\n`;
    const realRm = fs.rmSync;
    const realWrite = fs.writeFileSync;
    const realOpen = fs.openSync;
    let interposed = false;
    // Another waiter breaks the stale lock and takes a fresh one at the worst moment: after this
    // waiter has read and judged the stale lock, before its first change on disk that breaks it.
    const otherWaiterBreaksFirst = (target: FsModule.PathLike): void => {
      if (interposed || !String(target).startsWith(file)) return;
      interposed = true;
      realRm(file, { force: true });
      realWrite(file, fresh);
    };
    jest.spyOn(fs, "rmSync").mockImplementation((target, opts) => {
      otherWaiterBreaksFirst(target);
      return realRm(target, opts);
    });
    jest.spyOn(fs, "openSync").mockImplementation(((target: FsModule.PathLike, flags: FsModule.OpenMode, mode?: FsModule.Mode) => {
      if (String(target) !== file) otherWaiterBreaksFirst(target);
      return realOpen(target, flags, mode);
    }) as typeof FsModule.openSync);

    let ran = false;
    await expect(
      withNameLock({ cwd, apiUrl: API, name: "ci", waitMs: 600, leaseMs: MIN_LEASE_MS, onWait: () => undefined }, async () => {
        ran = true;
      }),
    ).rejects.toThrow(/gave up waiting/);
    expect(interposed).toBe(true);
    expect(ran).toBe(false);
    expect(readFileSync(file, "utf8")).toBe(fresh);
  });

  test("a lock that names no holder (damaged) is waited for while fresh and broken once stale, like any other", async () => {
    for (const content of ["", "garbage"]) {
      const cwd = folder();
      const file = nameLockPath(cwd, API, "ci");
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
      // Fresh: no process is known to be gone, so a waiter waits.
      await expect(
        withNameLock({ cwd, apiUrl: API, name: "ci", waitMs: 300, leaseMs: MIN_LEASE_MS, onWait: () => undefined }, async () => undefined),
      ).rejects.toThrow(/gave up waiting/);
      const old = new Date(Date.now() - MIN_LEASE_MS - 1_000);
      utimesSync(file, old, old);
      await expect(
        withNameLock({ cwd, apiUrl: API, name: "ci", waitMs: 2_000, leaseMs: MIN_LEASE_MS, onWait: () => undefined }, async () => "held"),
      ).resolves.toBe("held");
      expect(existsSync(file)).toBe(false);
    }
  });

  test("a lock is never seen without its holder: the content is in place when the name appears", async () => {
    const cwd = folder();
    const file = nameLockPath(cwd, API, "ci");
    let seen: string | undefined;
    await withNameLock({ cwd, apiUrl: API, name: "ci", waitMs: 1_000, leaseMs: MIN_LEASE_MS, onWait: () => undefined }, async () => {
      seen = readFileSync(file, "utf8");
    });
    expect(seen).toMatch(new RegExp(`^${process.pid}\n${hostname()}\n[a-z0-9]+\n\\d+\n$`));
    // No temporary file is left beside it.
    expect(readdirSync(path.dirname(file))).toEqual([]);
  });

  test("a stale lock (by age) is broken and the break leaves no marker behind", async () => {
    const cwd = folder();
    const file = nameLockPath(cwd, API, "old");
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `1\nsome-other-host\n`);
    const old = new Date(Date.now() - MIN_LEASE_MS - 60_000);
    utimesSync(file, old, old);
    let ran = false;
    await withNameLock({ cwd, apiUrl: API, name: "old", waitMs: 2_000, leaseMs: MIN_LEASE_MS, onWait: () => undefined }, async () => {
      ran = true;
    });
    expect(ran).toBe(true);
    expect(existsSync(file)).toBe(false);
    expect(fs.readdirSync(path.dirname(file))).toEqual([]);
  });

  test("processes racing to break one stale lock hold it one at a time", async () => {
    const racer = path.join(folder(), "racer.js");
    bundleProgram(path.join(__dirname, "../support/name-lock-racer.ts"), racer);
    const cwd = folder();
    const file = nameLockPath(cwd, API, "race");
    deadLock(file);
    const log = path.join(cwd, "held.log");
    const contenders = 6;
    const startAt = String(Date.now() + 1_500);
    const runs = await Promise.all(
      Array.from({ length: contenders }, () =>
        runProcess(process.execPath, [racer, cwd, API, "race", startAt, "40", log], { env: process.env }),
      ),
    );
    for (const run of runs) expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const held = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((line) => line.split(" ").map(Number))
      .sort((a, b) => a[1] - b[1]);
    expect(held).toHaveLength(contenders);
    for (let i = 1; i < held.length; i++) expect(held[i][1]).toBeGreaterThanOrEqual(held[i - 1][2]);
    expect(existsSync(file)).toBe(false);
  });

  describe("a waiter killed while breaking a stale lock (its break marker left behind)", () => {
    /** A stale lock, and the marker of a waiter that died breaking it: what a kill at that moment leaves. */
    async function markerLeftBehind(name: string): Promise<{ cwd: string; file: string; marker: string }> {
      const dying = path.join(folder(), "dying.js");
      bundleProgram(path.join(__dirname, "../support/name-lock-dying-breaker.ts"), dying);
      const cwd = folder();
      const file = nameLockPath(cwd, API, name);
      deadLock(file);
      const died = await runProcess(process.execPath, [dying, cwd, API, name], { env: process.env });
      expect(died.code).toBe(9);
      const markers = readdirSync(path.dirname(file)).filter((f) => f.includes(".break-"));
      expect(markers).toHaveLength(1);
      expect(existsSync(file)).toBe(true);
      return { cwd, file, marker: path.join(path.dirname(file), markers[0]) };
    }

    test("its process is gone: the next waiter breaks the lock at once, and no marker stays", async () => {
      const { cwd, file } = await markerLeftBehind("killed");
      let ran = false;
      await withNameLock({ cwd, apiUrl: API, name: "killed", waitMs: 2_000, leaseMs: MIN_LEASE_MS, onWait: () => undefined }, async () => {
        ran = true;
      });
      expect(ran).toBe(true);
      expect(readdirSync(path.dirname(file))).toEqual([]);
    });

    test("a marker that names no process of this host is waited for, and taken over once older than the bound", async () => {
      const { cwd, file, marker } = await markerLeftBehind("other-host");
      writeFileSync(marker, "1\nsome-other-host\n");
      await expect(
        withNameLock(
          { cwd, apiUrl: API, name: "other-host", waitMs: 600, leaseMs: MIN_LEASE_MS, onWait: () => undefined },
          async () => undefined,
        ),
      ).rejects.toThrow(/gave up waiting/);
      const old = new Date(Date.now() - ABANDONED_BREAK_MS - 5_000);
      utimesSync(marker, old, old);
      let ran = false;
      await withNameLock(
        { cwd, apiUrl: API, name: "other-host", waitMs: 2_000, leaseMs: MIN_LEASE_MS, onWait: () => undefined },
        async () => {
          ran = true;
        },
      );
      expect(ran).toBe(true);
      expect(readdirSync(path.dirname(file))).toEqual([]);
    });

    test("processes racing to take over the abandoned break hold the lock one at a time", async () => {
      const { cwd, file } = await markerLeftBehind("race-abandoned");
      const racer = path.join(folder(), "racer.js");
      bundleProgram(path.join(__dirname, "../support/name-lock-racer.ts"), racer);
      const log = path.join(folder(), "held.log");
      const contenders = 6;
      const startAt = String(Date.now() + 1_500);
      const runs = await Promise.all(
        Array.from({ length: contenders }, () =>
          runProcess(process.execPath, [racer, cwd, API, "race-abandoned", startAt, "40", log], { env: process.env }),
        ),
      );
      for (const run of runs) expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
      const held = readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((line) => line.split(" ").map(Number))
        .sort((a, b) => a[1] - b[1]);
      expect(held).toHaveLength(contenders);
      for (let i = 1; i < held.length; i++) expect(held[i][1]).toBeGreaterThanOrEqual(held[i - 1][2]);
      expect(readdirSync(path.dirname(file))).toEqual([]);
    });
  });
});
