import { readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";

import { HANDOFF_DIR } from "../../protocol";
import { errorMessage } from "../../shared/error-message";
import { readIfReadable } from "../io/private-file";
import { optionalString, readRecord, recordPath, writeRecord } from "./record-file";

/**
 * What the destroy half of a replacement leaves for the create half (what the create half
 * remembers of the token it last applied is its applied record: ./applied-record.ts).
 *
 * Terraform replaces the `null_resource` on every rename or update. Without create_before_destroy
 * the destroy half runs first; it is the only code that still sees the old name (`self`), so it
 * writes a hand-off. Both halves belong to one terraform run, so every record carries the run's
 * id (`plantimestamp()`, see TokenEnv.RUN) and only the same run may take a hand-off over; and
 * the stack's plan-time read, which precedes every provisioner of a run, retires the hand-offs
 * earlier runs left (see {@link retireHandoffs}). So a destroy followed by a deploy, another
 * workspace or another stack never inherits a token this way. Ids and names are not secrets;
 * nothing else is written.
 */
export interface Handoff {
  /** The construct's key and the Terraform workspace: a hand-off is theirs alone. */
  readonly key: string;
  readonly workspace: string;
  /** The id of the token the old resource managed, when the API could be asked for it. */
  readonly id?: string;
  /** The token's name as the old resource knew it. */
  readonly name: string;
  /** The run that released it (`plantimestamp()`). */
  readonly runId: string;
  /**
   * Set by the plan-time read of a later run (see {@link retireHandoffs}): this hand-off was left
   * by an earlier run, and no create half may take it over, even one whose run id is the same
   * (`plantimestamp()` counts seconds, and two runs can start within one).
   */
  readonly retired?: boolean;
  /**
   * The account the token lives on (see {@link accountDigest}): a token of one account is never
   * handed over on another, where a token of the same name may belong to someone else.
   */
  readonly api: string;
  readonly releasedAt: string;
  /**
   * Set by the create half before it writes to the API: the run that took the token over and
   * the name it is renaming it to. A claimed hand-off whose create failed is honoured by a later
   * run with the same target name, so the retry finishes the rename.
   */
  readonly claimedBy?: string;
  readonly targetName?: string;
}

export function writeHandoff(cwd: string, handoff: Handoff): void {
  writeRecord(recordPath(cwd, "handoff", handoff.workspace, handoff.key), handoff);
}

/**
 * The hand-off for this workspace and key, or undefined. A file that cannot be understood, or
 * that belongs to another key or workspace (a hash collision, a copied folder), is ignored.
 */
export function readHandoff(cwd: string, workspace: string, key: string, warn: (line: string) => void): Handoff | undefined {
  const raw = readRecord(recordPath(cwd, "handoff", workspace, key), cwd, warn);
  if (!raw) return undefined;
  const ok =
    raw.key === key &&
    raw.workspace === workspace &&
    typeof raw.name === "string" &&
    typeof raw.runId === "string" &&
    typeof raw.releasedAt === "string" &&
    typeof raw.api === "string" &&
    optionalString(raw.id) &&
    optionalString(raw.claimedBy) &&
    optionalString(raw.targetName) &&
    (raw.retired === undefined || typeof raw.retired === "boolean");
  if (!ok) {
    warn(`ignoring a damaged hand-off file, or one of another workspace, for key ${key}`);
    return undefined;
  }
  return raw as unknown as Handoff;
}

/**
 * Marks as retired the unclaimed hand-offs of this workspace that an earlier run left: every one
 * when `all` (the caller runs before any provisioner of its run), else those of another run id.
 * A claimed hand-off stays: it is a rename whose write failed, which a later run finishes. Runs
 * in the stack's plan-time read; lists the folder rather than hashing names (see ../io/sha256.ts).
 * Best effort: a hand-off that cannot be rewritten (a folder of another user, a read-only mount)
 * is warned about once and left, never failing the plan; a create half still follows a hand-off
 * of its own run only. Returns how many it retired.
 */
export function retireHandoffs(cwd: string, workspace: string, runId: string, all: boolean, warn: (line: string) => void): number {
  let files: string[];
  try {
    files = readdirSync(path.join(cwd, HANDOFF_DIR)).filter((f) => f.endsWith(".json") && !f.endsWith(".applied.json"));
  } catch {
    return 0;
  }
  let retired = 0;
  let failure: string | undefined;
  for (const file of files) {
    const full = path.join(cwd, HANDOFF_DIR, file);
    let text: string;
    let raw: Record<string, unknown>;
    try {
      text = readFileSync(full, "utf8");
      raw = JSON.parse(text) as Record<string, unknown>;
    } catch {
      continue; // a create half reads and drops what it cannot understand
    }
    if (raw === null || typeof raw !== "object" || raw.workspace !== workspace) continue;
    if (raw.claimedBy !== undefined || raw.retired === true) continue;
    if (!all && raw.runId === runId) continue;
    // A read deferred to the apply runs beside this run's provisioners: a hand-off written or
    // claimed since it was read is theirs, not one to retire.
    if (readIfReadable(full) !== text) continue;
    try {
      writeRecord(full, { ...raw, retired: true });
      retired++;
    } catch (err) {
      failure ??= `${path.relative(cwd, full)}: ${errorMessage(err)}`;
    }
  }
  if (failure !== undefined) warn(`could not mark a hand-off of an earlier terraform run as spent (${failure}); going on`);
  return retired;
}

export function removeHandoff(cwd: string, workspace: string, key: string): void {
  rmSync(recordPath(cwd, "handoff", workspace, key), { force: true });
}
