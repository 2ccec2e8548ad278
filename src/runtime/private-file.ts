import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Writes `text` to `file` (mode 0600, its folder made if need be) through a file of this process
 * renamed into place, so that a reader, another script of the run, never sees half a file.
 */
export function writePrivateFile(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}
