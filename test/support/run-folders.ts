// The run folders a test's own TMPDIR holds (src/runtime/run/run-folder.ts), for suites that look inside them.
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The run folders of this user in `tmp`, each `gpucloud-<uid>-<ticket id>`. */
export function runFoldersIn(tmp: string): string[] {
  const prefix = `gpucloud-${process.getuid?.() ?? ""}-`;
  return readdirSync(tmp)
    .filter((name) => name.startsWith(prefix))
    .map((name) => path.join(tmp, name));
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
