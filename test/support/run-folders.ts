// The run folders a test's own TMPDIR holds (src/runtime/run/run-folder.ts), for suites that look inside them.
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The parent of this user's run folders in `tmp`: `gpucloud-<uid>`. */
export function runParentIn(tmp: string): string {
  return path.join(tmp, `gpucloud-${process.getuid?.() ?? ""}`);
}

/** The run folders of this user in `tmp`, each `gpucloud-<uid>/<ticket id>`. */
export function runFoldersIn(tmp: string): string[] {
  const parent = runParentIn(tmp);
  return existsSync(parent) ? readdirSync(parent).map((name) => path.join(parent, name)) : [];
}

/** The files of kind `suffix` (`.walk.json`, `.session.json`) in every run folder of `tmp`. */
export function runFilesIn(tmp: string, suffix: string): string[] {
  return runFoldersIn(tmp).flatMap((folder) =>
    readdirSync(folder)
      .filter((f) => f.endsWith(suffix))
      .map((f) => path.join(folder, f)),
  );
}

/** Ends the lease of every run folder in `tmp`, as if its last script had finished long ago. */
export function lapseLeases(tmp: string): void {
  for (const folder of runFoldersIn(tmp)) writeFileSync(path.join(folder, "lease"), "0");
}
