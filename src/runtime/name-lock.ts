import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { apiDigest } from "./handoff";
import { HANDOFF_DIR } from "./protocol";
import { sha256Hex } from "./sha256";

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

/** What a lock file says about its holder: `<pid>\n<host>\n`. */
function lockOwner(): string {
  return `${process.pid}\n${hostname()}\n`;
}

/**
 * True when the lock file names a process of this host that no longer exists (killed by the
 * watchdog, by Ctrl-C, by a crash): its lock can be broken at once. A file from another host,
 * or in an older format, is judged by its age alone.
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

function readLock(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The lock file for a name on an API, in the hand-off folder. The API counts as the hand-offs
 * count it (apiDigest: trailing slashes, white space, the case of scheme and host aside), so two spellings of one
 * address share a lock.
 */
export function nameLockPath(cwd: string, apiUrl: string, name: string): string {
  const digest = sha256Hex(`${apiDigest(apiUrl)}\n${name}`).slice(0, 24);
  return path.join(cwd, HANDOFF_DIR, `lock-${digest}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn` holding the lock for `name`; waits at most `waitMs` for another holder. A lock is
 * broken when its holder is known to be gone, or when it is older than `staleAfterMs`.
 */
export async function withNameLock<T>(
  cwd: string,
  apiUrl: string,
  name: string,
  waitMs: number,
  onWait: (line: string) => void,
  fn: () => Promise<T>,
  staleAfterMs: number = STALE_LOCK_MS,
): Promise<T> {
  const file = nameLockPath(cwd, apiUrl, name);
  mkdirSync(path.dirname(file), { recursive: true });
  const owner = lockOwner();
  const giveUpAt = Date.now() + waitMs;
  let told = false;
  for (;;) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, owner);
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    let age = 0;
    try {
      age = Date.now() - statSync(file).mtimeMs;
    } catch {
      continue; // released meanwhile
    }
    const content = readLock(file);
    if (content === undefined) continue; // released meanwhile
    if (age > staleAfterMs || holderIsGone(content)) {
      // Only the file judged stale: another waiter may have broken it and taken a new one meanwhile.
      if (readLock(file) === content) rmSync(file, { force: true });
      continue;
    }
    if (Date.now() >= giveUpAt) {
      throw new Error(
        `another provisioner in this folder is creating or adopting an API token named "${name}" (lock ${path.relative(cwd, file)}); ` +
          `gave up waiting. If no terraform is running here, delete that file`,
      );
    }
    if (!told) {
      onWait(`waiting for another provisioner that is creating or adopting an API token named "${name}"`);
      told = true;
    }
    await sleep(100 + Math.floor(Math.random() * 150));
  }
  try {
    return await fn();
  } finally {
    // Ours only: a lock broken as stale meanwhile may now be another process's.
    if (readLock(file) === owner) rmSync(file, { force: true });
  }
}
