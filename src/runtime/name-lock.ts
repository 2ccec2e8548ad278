import { createHash } from "node:crypto";
import { mkdirSync, openSync, closeSync, rmSync, statSync, writeSync } from "node:fs";
import path from "node:path";
import { HANDOFF_DIR } from "./protocol";

/**
 * An exclusive lock per token name (and API), held by a create half around "list, then create
 * or adopt". Terraform runs up to ten provisioners at once; two ApiTokens whose names are only
 * known at apply time and turn out equal would otherwise both find no token and both create
 * one. Literal names are refused at synth time; this covers the rest within one stack folder.
 */

/** A lock older than this was left by a process that died; it is broken. */
export const STALE_LOCK_MS = 10 * 60_000;

/** The lock file for a name on an API, in the hand-off folder. */
export function nameLockPath(cwd: string, apiUrl: string, name: string): string {
  const digest = createHash("sha256").update(`${apiUrl}\n${name}`).digest("hex").slice(0, 24);
  return path.join(cwd, HANDOFF_DIR, `lock-${digest}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `fn` holding the lock for `name`; waits at most `waitMs` for another holder. */
export async function withNameLock<T>(
  cwd: string,
  apiUrl: string,
  name: string,
  waitMs: number,
  onWait: (line: string) => void,
  fn: () => Promise<T>,
): Promise<T> {
  const file = nameLockPath(cwd, apiUrl, name);
  mkdirSync(path.dirname(file), { recursive: true });
  const giveUpAt = Date.now() + waitMs;
  let told = false;
  for (;;) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
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
    if (age > STALE_LOCK_MS) {
      rmSync(file, { force: true });
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
    rmSync(file, { force: true });
  }
}
