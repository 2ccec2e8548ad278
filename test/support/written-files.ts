// What a plan or an apply wrote on disk, for suites that prove the library keeps nothing outside
// Terraform's state and the API (issue 41): no run folder, session, lock or hand-off file anywhere.
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import path from "node:path";

/** Every file, link and folder under `dir` (relative paths, "/"-separated) with a digest of its content. */
export type FileSnapshot = ReadonlyMap<string, string>;

export function snapshotFiles(dir: string): FileSnapshot {
  const files = new Map<string, string>();
  const walk = (rel: string): void => {
    const full = path.join(dir, rel);
    const stat = lstatSync(full);
    if (stat.isSymbolicLink()) files.set(rel, `link:${readlinkSync(full)}`);
    else if (stat.isDirectory()) {
      if (rel !== "") files.set(rel, "dir");
      for (const name of readdirSync(full)) walk(rel === "" ? name : `${rel}/${name}`);
    } else files.set(rel, createHash("sha256").update(readFileSync(full)).digest("hex"));
  };
  if (existsSync(dir)) walk("");
  return files;
}

/** Paths added, removed or changed between two snapshots of one folder, sorted. */
export function changedFiles(before: FileSnapshot, after: FileSnapshot): string[] {
  const changed = new Set<string>();
  for (const [rel, digest] of after) if (before.get(rel) !== digest) changed.add(rel);
  for (const rel of before.keys()) if (!after.has(rel)) changed.add(rel);
  return [...changed].sort();
}

/**
 * Terraform's own files in a stack folder: its working directory (`.terraform/`, where the suites'
 * plan files go too), the local state, its backup and the workspaces' states.
 */
const TERRAFORMS_OWN = /^(\.terraform(\/.*)?|terraform\.tfstate(\.backup)?|terraform\.tfstate\.d(\/.*)?)$/;

/**
 * Node's compile cache of the script (docs/operations.md, "The code cache"): code, nothing of a run,
 * written on Node 22 and later only.
 */
const CODE_CACHE = /^\.gpucloud-cache(\/.*)?$/;

/** The paths of `changed` that are neither Terraform's own nor the script's code cache. */
export function notTerraformsOwn(changed: readonly string[]): string[] {
  return changed.filter((rel) => !TERRAFORMS_OWN.test(rel) && !CODE_CACHE.test(rel));
}
