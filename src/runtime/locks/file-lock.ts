import { closeSync, linkSync, mkdirSync, openSync, rmSync, type Stats, statSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";

import { readIfReadable } from "../io/private-file";
import { sha256Hex } from "../io/sha256";

/**
 * An exclusive lock on a file, for the scripts of one folder that Terraform runs side by side:
 * taken by creating the file with its holder in it, waited for with a bound, and broken when
 * its holder is known to be gone or when it is older than any live holder can be. The name lock
 * (./name-lock.ts) is this lock per token name; the run's login and walk (../run/) take it on
 * their files.
 */

/**
 * What a lock file says about its holder: `<pid>\n<host>\n<nonce>\n`. The nonce makes every lock
 * taken a distinct one, so that a breaker can tell the stale lock it judged from a fresh lock of
 * the same process id that took its place.
 */
function lockOwner(): string {
  const nonce = `${Date.now().toString(36)}${process.hrtime.bigint().toString(36)}${Math.random().toString(36).slice(2)}`;
  return `${process.pid}\n${hostname()}\n${nonce}\n`;
}

/**
 * True when the lock file names a process of this host that no longer exists (killed by the
 * watchdog, by Ctrl-C, by a crash): its lock can be broken at once. A file from another host,
 * or one that names no holder (damaged), is judged by its age alone.
 */
function holderIsGone(content: string): boolean {
  const [pidText, host] = content.split("\n");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0 || host !== hostname()) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Takes the lock with its content already in it: the content goes to a file of this process,
 * which is then hard-linked to the lock's name (atomic, and refused when the name exists), so a
 * lock is never seen empty. Where the file system has no hard links, created exclusively, then
 * written. False when another holds the lock.
 */
function takeLock(file: string, owner: string): boolean {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, owner, { mode: 0o600 });
  try {
    linkSync(tmp, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  try {
    const fd = openSync(file, "wx", 0o600);
    try {
      writeSync(fd, owner);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
}

/** Whether the lock seen may be broken: its holder is gone, or it is too old to have a live one. */
function isStale(seen: SeenLock, staleAfterMs: number): boolean {
  return Date.now() - seen.mtimeMs > staleAfterMs || holderIsGone(seen.content);
}

/** One lock as a waiter saw it: its content and the file's identity. */
interface SeenLock {
  readonly content: string;
  readonly ino: number;
  readonly mtimeMs: number;
}

function observeLock(file: string): SeenLock | undefined {
  let stat: Stats;
  try {
    stat = statSync(file);
  } catch {
    return undefined;
  }
  // A file that exists but cannot be read names no holder: judged by its age (see isStale).
  const content = readIfReadable(file) ?? "";
  return { content, ino: stat.ino, mtimeMs: stat.mtimeMs };
}

function sameLock(a: SeenLock, b: SeenLock | undefined): boolean {
  return b !== undefined && a.content === b.content && a.ino === b.ino && a.mtimeMs === b.mtimeMs;
}

/**
 * A break marker older than this was left by a waiter that died while breaking (the break itself
 * takes microseconds): the next generation's marker may be taken.
 */
export const ABANDONED_BREAK_MS = 60_000;

/** Generations of break markers tried for one lock before a waiter just waits. */
const MAX_BREAK_GENERATIONS = 8;

/**
 * Removes the lock `seen`, judged stale, unless it has been replaced. Reading, comparing and
 * deleting is not atomic by itself: two waiters judge the same stale lock, the first deletes it
 * and takes a fresh one, the second deletes that fresh lock, and two holders run at
 * once. So only one waiter may break a given lock: the one that creates (O_EXCL) the break
 * marker named after that lock's identity (content with its nonce, inode, mtime). Holding it,
 * the waiter checks the file is still that lock, deletes it, then the marker. A later waiter
 * that still has the old lock in mind may take the marker again, but then finds another file
 * (or none) and deletes nothing: the old lock was deleted before its marker was.
 *
 * A waiter killed while holding the marker leaves it behind, with the stale lock. Deleting such
 * a marker would reopen the race (two waiters judge it abandoned; the first deletes it and takes
 * a new one, the second deletes that one and takes its own), so it is never deleted by another
 * waiter: instead, once it is abandoned (its process gone, or older than
 * {@link ABANDONED_BREAK_MS}), the marker of the next generation (`….break-<identity>.1`, `.2`…)
 * is the one to take, again with O_EXCL, so that still one waiter at a time breaks the lock.
 * The waiter that breaks it deletes the markers of every generation, once the lock is gone.
 */
function breakStaleLock(file: string, seen: SeenLock): boolean {
  const identity = sha256Hex(`${seen.content}\n${seen.ino}\n${seen.mtimeMs}`).slice(0, 24);
  const markers: string[] = [];
  for (let generation = 0; ; generation++) {
    if (generation >= MAX_BREAK_GENERATIONS) return false;
    const marker = `${file}.break-${identity}${generation === 0 ? "" : `.${generation}`}`;
    markers.push(marker);
    if (takeMarker(marker)) break;
    // Another waiter is breaking it, or one died doing so.
    if (!markerAbandoned(marker)) return false;
  }
  try {
    if (sameLock(seen, observeLock(file))) rmSync(file, { force: true });
  } finally {
    // The lock judged stale no longer exists (deleted above, or replaced): its markers are spent.
    for (const marker of markers.reverse()) rmSync(marker, { force: true });
  }
  return true;
}

/** Creates the marker, naming this process as lock files do; false when it exists. */
function takeMarker(marker: string): boolean {
  let fd: number;
  try {
    fd = openSync(marker, "wx", 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
  try {
    writeSync(fd, `${process.pid}\n${hostname()}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * True when the waiter that took this marker died: its process of this host is gone, or the
 * marker is older than {@link ABANDONED_BREAK_MS}. A marker that vanished meanwhile is not
 * abandoned: its breaker finished.
 */
function markerAbandoned(marker: string): boolean {
  const seenMarker = observeLock(marker);
  if (seenMarker === undefined) return false;
  return Date.now() - seenMarker.mtimeMs > ABANDONED_BREAK_MS || holderIsGone(seenMarker.content);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface FileLockOptions {
  /** The folder messages name the lock file relative to. */
  readonly cwd: string;
  readonly waitMs: number;
  readonly staleAfterMs: number;
  readonly onWait: (line: string) => void;
  /** What a holder is doing, for messages: `creating or adopting an API token named "ci"`. */
  readonly holder: string;
}

/**
 * Runs `fn` holding the lock `file`; waits at most `waitMs` for another holder. A lock is broken
 * when its holder is known to be gone or when it is older than `staleAfterMs`.
 */
export async function withFileLock<T>(file: string, opts: FileLockOptions, fn: () => Promise<T>): Promise<T> {
  mkdirSync(path.dirname(file), { recursive: true });
  const owner = lockOwner();
  const giveUpAt = Date.now() + opts.waitMs;
  let told = false;
  for (;;) {
    if (takeLock(file, owner)) break;
    const seen = observeLock(file);
    if (seen === undefined) continue; // released meanwhile
    // Not broken: another waiter is breaking it: wait.
    if (isStale(seen, opts.staleAfterMs) && breakStaleLock(file, seen)) continue;
    if (Date.now() >= giveUpAt) {
      throw new Error(
        `another provisioner in this folder is ${opts.holder} (lock ${path.relative(opts.cwd, file)}); ` +
          `gave up waiting. If no terraform is running here, delete that file (and any ${path.basename(file)}.break-* beside it)`,
      );
    }
    if (!told) {
      opts.onWait(`waiting for another provisioner that is ${opts.holder}`);
      told = true;
    }
    await sleep(100 + Math.floor(Math.random() * 150));
  }
  try {
    return await fn();
  } finally {
    // Ours only: a lock broken as stale meanwhile may now be another process's.
    if (readIfReadable(file) === owner) rmSync(file, { force: true });
  }
}
