import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { HANDOFF_DIR } from "../protocol";
import { SESSION_FILE_PREFIX } from "./run-session";
import { WALK_FILE_PREFIX } from "./run-walk";

/** Files of one terraform run in the hand-off folder, each holding its run id as `run`. */
const RUN_FILE_PREFIXES = [SESSION_FILE_PREFIX, WALK_FILE_PREFIX];

/** A temporary file of a writer killed before its rename (see writePrivateFile) is dropped after this long. */
const STALE_TMP_MS = 60 * 60_000;

/**
 * Deletes the files that runs of another run id left (their sealed sessions, their walks), and
 * temporary files of them an hour old. Not those of its own id: another workspace of this folder
 * may be applying right now under a run of the same second, and reusing them costs nothing
 * (a walk records its run's writes). Called by the stack's plan-time read; it reads only their run
 * id, so it loads no node:crypto. Returns how many it deleted.
 */
export function removeEarlierRunFiles(cwd: string, run: string): number {
  let files: string[];
  try {
    files = readdirSync(path.join(cwd, HANDOFF_DIR)).filter((f) => RUN_FILE_PREFIXES.some((p) => f.startsWith(p)));
  } catch {
    return 0;
  }
  let removed = 0;
  for (const f of files) {
    const full = path.join(cwd, HANDOFF_DIR, f);
    if (f.endsWith(".tmp")) {
      if (olderThan(full, STALE_TMP_MS)) {
        rmSync(full, { force: true });
        removed++;
      }
      continue;
    }
    if (!f.endsWith(".json")) continue;
    let of: unknown;
    try {
      of = (JSON.parse(readFileSync(full, "utf8")) as { run?: unknown }).run;
    } catch {
      of = undefined;
    }
    if (of === run) continue;
    rmSync(full, { force: true });
    removed++;
  }
  return removed;
}

function olderThan(file: string, ms: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > ms;
  } catch {
    return false;
  }
}
