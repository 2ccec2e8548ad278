import path from "node:path";

import { DEFAULT_ENV_PREFIX, foldTokenName, HANDOFF_DIR } from "../../protocol";
import { runBudgetMsOrDefault } from "../../shared/config";
import { accountDigest } from "../account-identity";
import { sha256Hex } from "../io/sha256";
import { withFileLock } from "./file-lock";

/**
 * An exclusive lock per token name (and API), held by a create half around "list, then create
 * or adopt". Terraform runs up to ten provisioners at once; two ApiTokens whose names are only
 * known at apply time and turn out equal would otherwise both find no token and both create
 * one. Literal names are refused at synth time; this covers the rest within one stack folder.
 */

/**
 * A lock older than this was left by a process that died; it is broken. Callers whose holders
 * may live longer (a run budget above ten minutes) pass their own bound: a live holder's lock
 * must never be broken, or two creates of one name run at once.
 */
export const STALE_LOCK_MS = 10 * 60_000;

/** How long a script waits for another one holding a lock of its folder: its run's time budget. */
export function lockWaitMs(env: NodeJS.ProcessEnv): number {
  return Math.min(runBudgetMsOrDefault(env), 3600_000);
}

/**
 * When a lock is certainly stale: a holder of the same run (same budget) is killed by its
 * watchdog 15 s after its budget, so a lock older than the budget plus a margin has no live
 * holder. Never less than STALE_LOCK_MS.
 */
export function lockStaleAfterMs(env: NodeJS.ProcessEnv): number {
  return Math.max(STALE_LOCK_MS, runBudgetMsOrDefault(env) + 60_000);
}

/**
 * The lock file for a name on an API, in the hand-off folder. The API counts as the hand-offs
 * count it (accountDigest: trailing slashes, white space, the case of scheme and host aside), so two spellings of one
 * address share a lock. Two accounts (variable prefixes) never share one, even on one address.
 * The name counts folded, as a create half matches names (foldTokenName): "CI" and "ci " are one
 * name, so they share a lock, or both would list no such token and both create one.
 */
export function nameLockPath(cwd: string, apiUrl: string, name: string, envPrefix: string = DEFAULT_ENV_PREFIX): string {
  const digest = sha256Hex(`${accountDigest(envPrefix, apiUrl)}\n${foldTokenName(name)}`).slice(0, 24);
  return path.join(cwd, HANDOFF_DIR, `lock-${digest}`);
}

export interface NameLockOptions {
  /** The stack folder, whose hand-off folder holds the lock. */
  readonly cwd: string;
  /** The API address and the account's variable prefix (default: the default account's): see {@link nameLockPath}. */
  readonly apiUrl: string;
  readonly envPrefix?: string;
  /** The token name, as configured. */
  readonly name: string;
  /** How long to wait for another holder (see {@link lockWaitMs}). */
  readonly waitMs: number;
  /** When a lock is certainly stale (see {@link lockStaleAfterMs}); default {@link STALE_LOCK_MS}. */
  readonly staleAfterMs?: number;
  /** Says once that this script waits for another holder. */
  readonly onWait: (line: string) => void;
}

/** Runs `fn` holding the lock for the token name `opts.name` on its account (see withFileLock). */
export async function withNameLock<T>(opts: NameLockOptions, fn: () => Promise<T>): Promise<T> {
  const file = nameLockPath(opts.cwd, opts.apiUrl, opts.name, opts.envPrefix);
  return withFileLock(
    file,
    {
      cwd: opts.cwd,
      waitMs: opts.waitMs,
      staleAfterMs: opts.staleAfterMs ?? STALE_LOCK_MS,
      onWait: opts.onWait,
      holder: `creating or adopting an API token named "${opts.name}"`,
    },
    fn,
  );
}
