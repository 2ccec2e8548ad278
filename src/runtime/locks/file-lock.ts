import { closeSync, linkSync, mkdirSync, openSync, rmSync, type Stats, statSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";

import { sha256Hex } from "../io/crypto";
import { readIfReadable } from "../io/private-file";

/**
 * An exclusive lock on a file, for the scripts Terraform runs side by side: taken by creating the
 * file with its holder in it, waited for with a bound, and broken only when its holder is known to
 * be gone or its lease, which the holder wrote into it by its own budget, has lapsed.
 */

/** What a lock file says: `<pid>\n<host>\n<nonce>\n<lease end, ms>\n`. The nonce makes every lock taken a distinct one. */
function lockContent(leaseMs: number): string {
  const nonce = `${process.hrtime.bigint().toString(36)}${Math.random().toString(36).slice(2)}`;
  return `${process.pid}\n${hostname()}\n${nonce}\n${Date.now() + leaseMs}\n`;
}

interface Holder {
  readonly pid?: number;
  readonly host?: string;
  readonly leaseEnd?: number;
}

function holderOf(content: string): Holder {
  const [pidText, host, , leaseText] = content.split("\n");
  const pid = Number(pidText);
  const leaseEnd = Number(leaseText);
  return {
    pid: Number.isInteger(pid) && pid > 0 ? pid : undefined,
    host: host || undefined,
    leaseEnd: leaseText && Number.isFinite(leaseEnd) ? leaseEnd : undefined,
  };
}

/** True when the holder names a process of this host that no longer exists (killed, crashed). */
function holderIsGone(holder: Holder): boolean {
  if (holder.pid === undefined || holder.host !== hostname()) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Takes the lock with its content already in it: written to a file of this process, then
 * hard-linked to the lock's name (atomic, refused when the name exists), so a lock is never seen
 * empty. Where the file system has no hard links, created exclusively, then written. False when
 * another holds it.
 */
function takeLock(file: string, content: string): boolean {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
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
      writeSync(fd, content);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
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
  return { content: readIfReadable(file) ?? "", ino: stat.ino, mtimeMs: stat.mtimeMs };
}

/** Whether the lock seen may be broken: its holder is gone, or its lease lapsed (a lock naming none: older than `leaseMs`). */
function isStale(seen: SeenLock, leaseMs: number, now: number = Date.now()): boolean {
  const holder = holderOf(seen.content);
  return (holder.leaseEnd ?? seen.mtimeMs + leaseMs) < now || holderIsGone(holder);
}

function sameLock(a: SeenLock, b: SeenLock | undefined): boolean {
  return b !== undefined && a.content === b.content && a.ino === b.ino && a.mtimeMs === b.mtimeMs;
}

/** A break marker older than this was left by a waiter that died while breaking (a break takes microseconds). */
export const ABANDONED_BREAK_MS = 60_000;

/** Generations of break markers tried for one lock before a waiter just waits. */
const MAX_BREAK_GENERATIONS = 8;

/**
 * Removes the lock `seen`, judged stale, unless it has been replaced. Reading, comparing and
 * deleting is not atomic, and two waiters that judge one stale lock must not both delete (the second
 * would delete the fresh lock the first took). So only the waiter that creates (O_EXCL) the break
 * marker named after that lock's identity breaks it. A marker whose waiter died is never deleted by
 * another (that would reopen the race); the next generation's marker (`….1`, `.2`…) is taken instead.
 */
function breakStaleLock(file: string, seen: SeenLock): boolean {
  const identity = sha256Hex(`${seen.content}\n${seen.ino}\n${seen.mtimeMs}`).slice(0, 24);
  const markers: string[] = [];
  for (let generation = 0; ; generation++) {
    if (generation >= MAX_BREAK_GENERATIONS) return false;
    const marker = `${file}.break-${identity}${generation === 0 ? "" : `.${generation}`}`;
    markers.push(marker);
    if (takeMarker(marker)) break;
    if (!markerAbandoned(marker)) return false; // another waiter is breaking it
  }
  try {
    if (sameLock(seen, observeLock(file))) rmSync(file, { force: true });
  } finally {
    // The lock judged stale is gone (deleted above, or replaced): its markers are spent.
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

/** True when the waiter that took this marker died: its process of this host is gone, or the marker is old. */
function markerAbandoned(marker: string): boolean {
  const seen = observeLock(marker);
  if (seen === undefined) return false; // its breaker finished
  return Date.now() - seen.mtimeMs > ABANDONED_BREAK_MS || holderIsGone(holderOf(seen.content));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface FileLockOptions {
  /** The folder messages name the lock file relative to. */
  readonly cwd: string;
  readonly waitMs: number;
  /** This holder's lease (see leaseMs in ./lock-bounds.ts), written into the lock. */
  readonly leaseMs: number;
  readonly onWait: (line: string) => void;
  /** What a holder is doing, for messages: `creating or adopting an API token named "ci"`. */
  readonly holder: string;
}

/**
 * Runs `fn` holding the lock `file`; waits at most `waitMs` for another holder. A lock is broken
 * when its holder is known to be gone or its lease has lapsed.
 */
export async function withFileLock<T>(file: string, opts: FileLockOptions, fn: () => Promise<T>): Promise<T> {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const content = lockContent(opts.leaseMs);
  const giveUpAt = Date.now() + opts.waitMs;
  let told = false;
  for (;;) {
    if (takeLock(file, content)) break;
    const seen = observeLock(file);
    // Broken: take it at once. Released meanwhile (or a name that cannot be read): wait like for a holder.
    if (seen !== undefined && isStale(seen, opts.leaseMs) && breakStaleLock(file, seen)) continue;
    if (Date.now() >= giveUpAt) {
      const relative = path.relative(opts.cwd, file);
      throw new Error(
        `another script is ${opts.holder} (lock ${relative.startsWith("..") ? file : relative}); gave up waiting. ` +
          `If no terraform is running, delete that file (and any ${path.basename(file)}.break-* beside it)`,
      );
    }
    if (!told) {
      opts.onWait(`waiting for another script that is ${opts.holder}`);
      told = true;
    }
    await sleep(100 + Math.floor(Math.random() * 150));
  }
  try {
    return await fn();
  } finally {
    // Ours only: a lock broken meanwhile may now be another process's.
    if (readIfReadable(file) === content) rmSync(file, { force: true });
  }
}
