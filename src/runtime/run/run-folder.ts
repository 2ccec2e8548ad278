import { lstatSync, mkdirSync, readdirSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { errorMessage } from "../../shared/error-message";
import { normalizeApiUrl } from "../account-identity";
import { sha256Hex } from "../io/sha256";
import { lockStaleAfterMs } from "../locks/lock-bounds";

/**
 * Where the scripts of one terraform run share what they learn (the walk of the token list, the
 * login): a folder of the user's own under the temp folder, outside the stack folder, which
 * pipelines cache and upload and where a file would outlive the run. A CI job's temp folder dies
 * with the job; elsewhere every plan-time read sweeps what is spent (see {@link sweepRunFolder}).
 *
 * A run's file belongs to that run alone: its name is made of the stack folder and workspace (its
 * scope, which the next plan of the same scope sweeps), the run's nonce (random per plan, made by
 * the plan-time read: `plantimestamp()` counts seconds, and a retry or another workspace often
 * shares one), and the account (credential identity, variable prefix, API address). No other run,
 * workspace, credential or API address can arrive at the same name.
 */

/** What names one account's files of one run. */
export interface RunFileKey {
  /** Terraform's working directory: the stack folder. */
  readonly cwd: string;
  readonly workspace: string;
  /** The run's nonce (see {@link newRunNonce}). */
  readonly nonce: string;
  /** The credential's identity (see credentialIdentity): a username, or a digest of an API token. */
  readonly identity: string;
  readonly envPrefix: string;
  readonly apiUrl: string;
}

export type RunFileKind = "walk" | "session";

/** How long after its last write a file is of no use to any run, by kind; the sweep removes it then. */
const MAX_AGE_MS: Readonly<Record<RunFileKind, number>> = {
  // The refresh token's lifetime (spec §5): after it, a stored session cannot serve anyone.
  session: 2 * 60 * 60_000,
  // An apply is long over: a provisioner that finds no walk takes a new one.
  walk: 12 * 60 * 60_000,
};
/** A temporary file of a writer killed before its rename (see writePrivateFile). */
const STALE_TMP_MS = 60 * 60_000;

/**
 * A new run's nonce: unique per plan, so that no run takes another's files, even within one second.
 * It needs to be unique, not secret (the folder is the user's own), so it is made without
 * node:crypto, which the plan-time read does not load (see ../io/sha256.ts): the time, the process and
 * two draws of Math.random, which Node seeds from the system's entropy in each process. The run's id
 * as hand-offs know it (`plantimestamp()`), when given, follows after a "/" (see handoffRunOfNonce):
 * the create halves get both through one value of their environment.
 */
export function newRunNonce(handoffRun: string | undefined): string {
  const draw = () => Math.random().toString(36).slice(2, 12).padEnd(10, "0");
  const unique = `${Date.now().toString(36)}-${process.pid.toString(36)}-${draw()}${draw()}`;
  return handoffRun ? `${unique}/${handoffRun}` : unique;
}

/** The run's id as hand-offs know it, which a nonce carries (see newRunNonce); undefined when it carries none. */
export function handoffRunOfNonce(nonce: string): string | undefined {
  const slash = nonce.indexOf("/");
  return slash >= 0 ? nonce.slice(slash + 1) || undefined : undefined;
}

/**
 * A short digest of text for a file name (FNV-1a, 64 bits, as hex), without node:crypto: the scope
 * and nonce parts, which the plan-time read computes to sweep. Only names of one user's own files
 * depend on it; the account part, which holds the credential's identity, is a sha-256.
 */
function nameDigest(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, "utf8")) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return hash.toString(16).padStart(16, "0");
}

function baseTempDir(env: NodeJS.ProcessEnv): string {
  return env.TMPDIR || env.TMP || env.TEMP || tmpdir();
}

/** The user's run folder (not made): `<temp>/gpucloud-<uid>`, or `-<user>` where there are no uids. */
export function runFolderPath(env: NodeJS.ProcessEnv): string {
  const who =
    typeof process.getuid === "function" ? String(process.getuid()) : (env.USERNAME || env.USER || "user").replace(/[^\w.-]/g, "_");
  return path.join(baseTempDir(env), `gpucloud-${who}`);
}

/**
 * The run folder, made 0700 if absent, after checking that it is this user's own: a real folder
 * (not a link someone planted in a shared /tmp), owned by this user, and open to nobody else.
 * Throws with the reason when it cannot be used; callers then go on without sharing.
 */
export function openRunFolder(env: NodeJS.ProcessEnv): string {
  const folder = runFolderPath(env);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const stat = lstatSync(folder);
  if (!stat.isDirectory() || stat.isSymbolicLink()) throw new Error(`${folder} is not a folder`);
  if (typeof process.getuid === "function") {
    if (stat.uid !== process.getuid()) throw new Error(`${folder} belongs to another user (uid ${stat.uid})`);
    if ((stat.mode & 0o077) !== 0) throw new Error(`${folder} is open to other users (mode ${(stat.mode & 0o777).toString(8)})`);
  }
  return folder;
}

/** The stack folder as one path, however Terraform was started (a link, a relative path). */
function stackFolder(cwd: string): string {
  try {
    return realpathSync(cwd);
  } catch {
    return path.resolve(cwd);
  }
}

/** The part of a run file's name shared by every run of a scope (stack folder and workspace). */
function scopePart(cwd: string, workspace: string): string {
  return nameDigest(`${stackFolder(cwd)}\n${workspace}`);
}

function noncePart(nonce: string): string {
  return nameDigest(nonce);
}

/** The file of `kind` for one account in one run, in `folder` (see {@link openRunFolder}). */
export function runFilePath(folder: string, key: RunFileKey, kind: RunFileKind): string {
  const account = sha256Hex(`${key.identity}\n${key.envPrefix}\n${normalizeApiUrl(key.apiUrl)}`).slice(0, 16);
  return path.join(folder, `${scopePart(key.cwd, key.workspace)}-${noncePart(key.nonce)}-${account}.${kind}.json`);
}

const RUN_FILE = /^([0-9a-f]{16})-([0-9a-f]{16})-[0-9a-f]{16}\.(walk|session)\.json$/;

/**
 * Removes, best effort, what no run can use any more: the files of this scope's earlier runs (the
 * plan-time read runs before any script of its own run, and Terraform's state lock keeps two runs
 * of one workspace apart), every file past its kind's age, and locks and temporary files that
 * killed scripts left. Never throws: a folder that cannot be cleaned costs disk, not the plan; `warn` is called
 * once with what failed. Returns how many files it removed.
 */
export function sweepRunFolder(
  env: NodeJS.ProcessEnv,
  scope: { readonly cwd: string; readonly workspace: string; readonly nonce: string },
  warn: (line: string) => void,
  now: number = Date.now(),
): number {
  const folder = runFolderPath(env);
  let files: string[];
  try {
    files = readdirSync(folder);
  } catch {
    return 0;
  }
  const mine = scopePart(scope.cwd, scope.workspace);
  const current = noncePart(scope.nonce);
  let removed = 0;
  let failure: string | undefined;
  for (const file of files) {
    const full = path.join(folder, file);
    const match = RUN_FILE.exec(file);
    let spent: boolean;
    if (match) spent = (match[1] === mine && match[2] !== current) || olderThan(full, MAX_AGE_MS[match[3] as RunFileKind], now);
    // A lock (or its break marker) older than any live holder's budget was left by a killed script.
    else if (file.endsWith(".lock") || file.includes(".lock.")) spent = olderThan(full, lockStaleAfterMs(env), now);
    else if (file.endsWith(".tmp")) spent = olderThan(full, STALE_TMP_MS, now);
    else continue;
    if (!spent) continue;
    try {
      rmSync(full, { force: true });
      removed++;
    } catch (err) {
      failure ??= `${full}: ${errorMessage(err)}`;
    }
  }
  if (failure !== undefined) warn(`could not remove a spent file of an earlier terraform run (${failure}); going on`);
  return removed;
}

function olderThan(file: string, ms: number, now: number): boolean {
  try {
    return now - statSync(file).mtimeMs > ms;
  } catch {
    return false;
  }
}
