import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Writes `text` to `file` (mode 0600; its folder made 0700 if need be, e.g. after a temp cleaner
 * removed it) through a file of this process renamed into place, so that a reader, another script
 * of the run, never sees half a file.
 */
export function writePrivateFile(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * The text of `file`, or undefined when it cannot be read, whatever the reason (absent, removed
 * meanwhile, a folder, no permission). Every reader of the hand-off folder treats a file it cannot
 * read as one that is not there: a record is not followed, a lock names no holder, a lock not read
 * as ours is not removed.
 */
export function readIfReadable(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
