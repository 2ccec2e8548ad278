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
 * the login): `<temp>/gpucloud-<uid>-<ticket id>`. The ticket's id is random per plan, so no other
 * run, workspace or local user can arrive at the name, or make it first. Outside the stack folder,
 * which pipelines cache and upload. The first script that needs it makes it 0700; every script
 * uses it only after checking that it is a real folder (not a link), its own, closed to others.
 *
 * Each script that opens it renews its lease, by its own bound (leaseMs): while the lease
 * holds, no sweep touches it; once it has lapsed, no live script of the run needs it (a script that
 * comes later makes it again, and walks and logs in once more).
 */

export type RunFileKind = "walk" | "session";

const LEASE_FILE = "lease";
/** The refresh token's lifetime (spec §5): a session file older than this serves nobody. */
const SESSION_MAX_AGE_MS = 2 * 60 * 60_000;

function baseTempDir(env: NodeJS.ProcessEnv): string {
  return env.TMPDIR || env.TMP || env.TEMP || tmpdir();
}

/** `<uid>`, or the user's name where there are no uids. */
function userPart(env: NodeJS.ProcessEnv): string {
  return typeof process.getuid === "function" ? String(process.getuid()) : (env.USERNAME || env.USER || "user").replace(/[^\w.-]/g, "_");
}

const folderPrefix = (env: NodeJS.ProcessEnv): string => `gpucloud-${userPart(env)}-`;

/** The run's folder (not made). */
export function runFolderPath(env: NodeJS.ProcessEnv, ticket: RunTicket): string {
  return path.join(baseTempDir(env), `${folderPrefix(env)}${ticket.id}`);
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

/**
 * Whether others could rename entries of the temp folder (writable by them, without the sticky
 * bit that shared /tmp folders have): they could then swap the run's folder for one of theirs.
 */
function tempFolderProblem(base: string): string | undefined {
  const stat = statSync(base);
  if ((stat.mode & 0o022) !== 0 && (stat.mode & 0o1000) === 0) {
    return `${base} is writable by other users and has no sticky bit: set TMPDIR to a folder of your own`;
  }
  return undefined;
}

/**
 * The run's folder, made 0700 if absent, after checking it (see above), with its lease renewed for
 * `leaseMs`. Throws with the reason when it cannot be used; callers then go on without sharing.
 */
export function openRunFolder(env: NodeJS.ProcessEnv, ticket: RunTicket, leaseMs: number, now: number = Date.now()): string {
  const base = baseTempDir(env);
  // A TMPDIR a job names but never made: made now, this user's own.
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const unsafe = tempFolderProblem(base);
  if (unsafe !== undefined) throw new Error(unsafe);
  const folder = runFolderPath(env, ticket);
  try {
    mkdirSync(folder, { mode: 0o700 });
    // A umask may have taken bits the owner needs; nothing else can have touched a folder just made.
    chmodSync(folder, 0o700);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
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
 * Removes, best effort, the run folders of this user whose lease has lapsed, and the session files
 * older than a session can serve. Touches only folders it verified as this user's own and, in them,
 * regular files of this user. Never throws: `warn` is called once with what failed. Returns how many
 * folders it removed.
 */
export function sweepRunFolders(env: NodeJS.ProcessEnv, warn: (line: string) => void, now: number = Date.now()): number {
  const base = baseTempDir(env);
  const prefix = folderPrefix(env);
  let entries: string[];
  try {
    entries = readdirSync(base).filter((name) => name.startsWith(prefix));
  } catch {
    return 0;
  }
  let removed = 0;
  let failure: string | undefined;
  for (const name of entries) {
    const folder = path.join(base, name);
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
