import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import type { RunTicket } from "../../protocol";
import { errorMessage } from "../../shared/error-message";
import { type AccountRef, normalizeApiUrl } from "../account-identity";
import { sha256Hex } from "../io/crypto";
import { writePrivateFile } from "../io/private-file";
import { MIN_LEASE_MS } from "../locks/lock-bounds";

/**
 * The run's private folder, where its scripts share what they learn (the walk of the token list,
 * the login): `<parent>/<ticket id>`, in the first usable parent of this user: `<temp>/gpucloud-<uid>`,
 * else `$XDG_RUNTIME_DIR/gpucloud`, else `~/.cache/gpucloud/runs`. A parent is usable when it is a
 * real folder (not a link) of this user, closed to others, in a folder others cannot rename entries
 * of; every script checks the same candidates in the same order, so a name another user squatted is
 * skipped by all alike, and no one else can make or plant anything inside. Outside the stack folder,
 * which pipelines cache and upload.
 *
 * Each script that opens the run's folder renews its lease by its own bound (leaseMs): while the
 * lease holds, no sweep touches it; once it lapsed, no live script of the run needs it (a later one
 * makes it again, and walks and logs in once more).
 */

export type RunFileKind = "walk" | "session";

const LEASE_FILE = "lease";
/** The refresh token's lifetime (spec §5): a session file older than this serves nobody. */
const SESSION_MAX_AGE_MS = 2 * 60 * 60_000;
const RUN_FOLDER_NAME = /^[0-9a-f]{16,64}$/;

function baseTempDir(env: NodeJS.ProcessEnv): string {
  return env.TMPDIR || env.TMP || env.TEMP || tmpdir();
}

/** `<uid>`, or the user's name where there are no uids. */
function userPart(env: NodeJS.ProcessEnv): string {
  return typeof process.getuid === "function" ? String(process.getuid()) : (env.USERNAME || env.USER || "user").replace(/[^\w.-]/g, "_");
}

/** A parent candidate: the folder, and the folder it lives in (which others must not be able to rename entries of). */
interface Candidate {
  readonly folder: string;
  readonly within: string;
}

/** Where run folders may live, in order of preference. */
function candidates(env: NodeJS.ProcessEnv): Candidate[] {
  const base = baseTempDir(env);
  const list: Candidate[] = [{ folder: path.join(base, `gpucloud-${userPart(env)}`), within: base }];
  if (env.XDG_RUNTIME_DIR) list.push({ folder: path.join(env.XDG_RUNTIME_DIR, "gpucloud"), within: env.XDG_RUNTIME_DIR });
  const home = env.HOME;
  if (home) list.push({ folder: path.join(home, ".cache", "gpucloud", "runs"), within: path.join(home, ".cache", "gpucloud") });
  return list;
}

/** Why `folder` may not hold this user's files, or undefined when it may: a real folder of this user, closed to others. */
function notOwnFolder(folder: string): string | undefined {
  const stat = lstatSync(folder);
  if (stat.isSymbolicLink() || !stat.isDirectory()) return `${folder} is not a folder`;
  if (typeof process.getuid !== "function") return undefined;
  if (stat.uid !== process.getuid()) return `${folder} belongs to another user (uid ${stat.uid})`;
  if ((stat.mode & 0o077) !== 0) return `${folder} is open to other users (mode ${(stat.mode & 0o777).toString(8)})`;
  return undefined;
}

/** Whether others could rename entries of `within` (writable by them, without a sticky bit): swap a folder for a link. */
function renamableByOthers(within: string): string | undefined {
  const stat = statSync(within);
  if ((stat.mode & 0o022) !== 0 && (stat.mode & 0o1000) === 0) return `${within} is writable by other users and has no sticky bit`;
  return undefined;
}

/**
 * Makes `folder` (and, with `recursive`, the folders above it) 0700 if absent; a folder just made is
 * set 0700 whatever the umask (nothing else can have touched it), one that exists is left as it is.
 */
function makePrivate(folder: string, recursive: boolean): void {
  let made: string | undefined;
  try {
    made = mkdirSync(folder, { mode: 0o700, recursive }) ?? (recursive ? undefined : folder);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  if (made !== undefined) chmodSync(folder, 0o700);
}

/** The first usable parent, made if need be; throws with every candidate's reason when none is. */
function openParent(env: NodeJS.ProcessEnv): string {
  const reasons: string[] = [];
  for (const { folder, within } of candidates(env)) {
    try {
      makePrivate(within, true);
      const unsafe = renamableByOthers(within);
      if (unsafe !== undefined) throw new Error(unsafe);
      makePrivate(folder, false);
      const problem = notOwnFolder(folder);
      if (problem !== undefined) throw new Error(problem);
      return folder;
    } catch (err) {
      reasons.push(errorMessage(err));
    }
  }
  throw new Error(`no private folder for this run: ${reasons.join("; ")} (set TMPDIR to a folder of your own)`);
}

/**
 * The run's folder, made 0700 if absent, after checking it and its parent (see above), with its
 * lease renewed for `leaseMs`. Throws with the reason when it cannot be used; callers then go on
 * without sharing.
 */
export function openRunFolder(env: NodeJS.ProcessEnv, ticket: RunTicket, leaseMs: number, now: number = Date.now()): string {
  const folder = path.join(openParent(env), ticket.id);
  makePrivate(folder, false);
  const problem = notOwnFolder(folder);
  if (problem !== undefined) throw new Error(problem);
  renewLease(folder, now + leaseMs);
  return folder;
}

function leaseOf(folder: string): number | undefined {
  try {
    const until = Number(readFileSync(path.join(folder, LEASE_FILE), "utf8"));
    return Number.isFinite(until) ? until : undefined;
  } catch {
    return undefined;
  }
}

function renewLease(folder: string, until: number): void {
  if ((leaseOf(folder) ?? 0) >= until) return;
  writePrivateFile(path.join(folder, LEASE_FILE), String(until));
}

/** The file of `kind` for one account in the run's folder: the account's credential, prefix and API address, as a digest. */
export function runFilePath(folder: string, account: AccountRef, kind: RunFileKind): string {
  const digest = sha256Hex(`${account.identity}\n${account.envPrefix}\n${normalizeApiUrl(account.apiUrl)}`).slice(0, 16);
  return path.join(folder, `${digest}.${kind}.json`);
}

/**
 * Removes, best effort, this user's run folders whose lease has lapsed, and the session files older
 * than a session can serve in the others. Looks only in parents it verified as this user's own
 * (never following a link), and removes only regular files of this user there. Never throws: `warn`
 * is called once with what failed. Returns how many folders it removed.
 */
export function sweepRunFolders(env: NodeJS.ProcessEnv, warn: (line: string) => void, now: number = Date.now()): number {
  let removed = 0;
  let failure: string | undefined;
  for (const { folder: parent, within } of candidates(env)) {
    let entries: string[];
    try {
      if (renamableByOthers(within) !== undefined || notOwnFolder(parent) !== undefined) continue;
      entries = readdirSync(parent).filter((name) => RUN_FOLDER_NAME.test(name));
    } catch {
      continue;
    }
    for (const name of entries) {
      const folder = path.join(parent, name);
      try {
        if (notOwnFolder(folder) !== undefined) continue;
        // A folder without a lease lost its maker between mkdir and the lease's write: judged by its own age.
        const lapsed = (leaseOf(folder) ?? lstatSync(folder).mtimeMs + MIN_LEASE_MS) < now;
        if (lapsed) {
          removeOwnFiles(folder, () => true);
          rmdirSync(folder);
          removed++;
        } else {
          removeOwnFiles(folder, (file, mtimeMs) => file.endsWith(".session.json") && now - mtimeMs > SESSION_MAX_AGE_MS);
        }
      } catch (err) {
        failure ??= `${folder}: ${errorMessage(err)}`;
      }
    }
  }
  if (failure !== undefined) warn(`could not remove a spent run folder (${failure}); going on`);
  return removed;
}

/** Removes the regular files of this user in `folder` that `spent` picks; nothing else. */
function removeOwnFiles(folder: string, spent: (file: string, mtimeMs: number) => boolean): void {
  for (const file of readdirSync(folder)) {
    const full = path.join(folder, file);
    const stat = lstatSync(full);
    if (!stat.isFile() || (typeof process.getuid === "function" && stat.uid !== process.getuid())) continue;
    if (spent(file, stat.mtimeMs)) rmSync(full, { force: true });
  }
}
