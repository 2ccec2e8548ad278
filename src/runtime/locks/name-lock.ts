import path from "node:path";

import { DEFAULT_ENV_PREFIX, foldTokenName, HANDOFF_DIR } from "../../protocol";
import { accountDigest } from "../account-identity";
import { sha256Hex } from "../io/crypto";
import { withFileLock } from "./file-lock";

/**
 * An exclusive lock per token name (and API), held by a create half around "list, then create
 * or adopt". Terraform runs up to ten provisioners at once; two ApiTokens whose names are only
 * known at apply time and turn out equal would otherwise both find no token and both create
 * one. Literal names are refused at synth time; this covers the rest within one stack folder.
 */

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
  /** How long to wait for another holder (see lockWaitMs in ./lock-bounds.ts). */
  readonly waitMs: number;
  /** This holder's lease (see leaseMs in ./lock-bounds.ts). */
  readonly leaseMs: number;
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
      leaseMs: opts.leaseMs,
      onWait: opts.onWait,
      holder: `creating or adopting an API token named "${opts.name}"`,
    },
    fn,
  );
}
