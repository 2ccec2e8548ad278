import { readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { HANDOFF_DIR } from "./protocol";
import { SESSION_FILE_PREFIX } from "./run-session";
import { WALK_FILE_PREFIX } from "./run-walk";

/** Files of one terraform run in the hand-off folder, each holding its run id as `run`. */
const RUN_FILE_PREFIXES = [SESSION_FILE_PREFIX, WALK_FILE_PREFIX];

/**
 * Deletes the files that earlier runs left (their sealed sessions, their walks): every one when
 * `all` (the caller runs before any script of its run, as for retireHandoffs), else those of
 * another run id. Called by the stack's plan-time read; it reads only their run id, so it loads
 * no node:crypto. Returns how many it deleted.
 */
export function removeEarlierRunFiles(cwd: string, run: string, all: boolean): number {
  let files: string[];
  try {
    files = readdirSync(path.join(cwd, HANDOFF_DIR)).filter((f) => f.endsWith(".json") && RUN_FILE_PREFIXES.some((p) => f.startsWith(p)));
  } catch {
    return 0;
  }
  let removed = 0;
  for (const f of files) {
    const full = path.join(cwd, HANDOFF_DIR, f);
    let of: unknown;
    try {
      of = (JSON.parse(readFileSync(full, "utf8")) as { run?: unknown }).run;
    } catch {
      of = undefined;
    }
    if (!all && of === run) continue;
    rmSync(full, { force: true });
    removed++;
  }
  return removed;
}
