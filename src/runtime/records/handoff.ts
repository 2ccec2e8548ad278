import { readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";

import { HANDOFF_DIR } from "../../protocol";
import { errorMessage } from "../../shared/error-message";
import { readIfReadable, writePrivateFile } from "../io/private-file";
import { sha256Hex } from "../io/sha256";

/**
 * What the destroy half of a replacement leaves for the create half, and what the create half
 * remembers of the token it last applied (for a rename the destroy half never sees).
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

/**
 * Written by every successful create half: the token this construct manages in this workspace,
 * as last applied from this folder. Under create_before_destroy (forced onto the sync resource
 * when a consumer has it) Terraform skips destroy-time provisioners, so no hand-off is ever
 * written; this record is how the create half of a rename still learns the old token, to warn
 * that it stays active; a finished record is only ever reported, never followed (a pending one
 * is: see {@link AppliedRecord.pending}). Among several tokens of one name, the one recorded here
 * is the one the stack keeps using. A destroy removes it.
 */
export interface AppliedRecord {
  readonly key: string;
  readonly workspace: string;
  readonly id: string;
  /** The configured name (the API may store another spelling of it). */
  readonly name: string;
  readonly at: string;
  /** The account the token is on (see {@link accountDigest}). */
  readonly api: string;
  /**
   * Who the credentials of that apply logged in as (see credentialIdentity): `user <name>` or a digest
   * of the API token, never a secret. A plan whose credentials are another identity, on an account
   * where this token is not listed, fails rather than move the stack to another account.
   */
  readonly identity?: string;
  /**
   * Written right after a write produced or chose this token, before anything that can fail
   * (checks, the look-up after a create): the apply did not finish. Unlike a finished record, a
   * pending one is followed by the next create half with the same name and API, which adopts
   * this token instead of creating another (a server that stores another spelling of the name,
   * a failure after the write).
   */
  readonly pending?: boolean;
}

type Kind = "handoff" | "applied";

function recordPath(cwd: string, kind: Kind, workspace: string, key: string): string {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(key)) throw new Error(`invalid hand-off key "${key}"`);
  // Workspace names are free text to us: hashed into the file name, kept verbatim inside.
  const ws = sha256Hex(workspace).slice(0, 16);
  const suffix = kind === "handoff" ? "json" : "applied.json";
  return path.join(cwd, HANDOFF_DIR, `${key}.${ws}.${suffix}`);
}

function writeRecord(file: string, record: object): void {
  writePrivateFile(file, JSON.stringify(record) + "\n");
}

/**
 * The record in `file`, or undefined. A file that cannot be read is taken as absent; one that is read
 * but holds no JSON object is damaged: it is warned about and removed.
 */
function readRecord(file: string, cwd: string, warn: (line: string) => void): Record<string, unknown> | undefined {
  const text = readIfReadable(file);
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    return parsed as Record<string, unknown>;
  } catch {
    warn(`ignoring unreadable hand-off file ${path.relative(cwd, file)}`);
    rmSync(file, { force: true });
    return undefined;
  }
}

const optionalString = (v: unknown): boolean => v === undefined || typeof v === "string";

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

export function writeAppliedRecord(cwd: string, record: AppliedRecord): void {
  writeRecord(recordPath(cwd, "applied", record.workspace, record.key), record);
}

export function readAppliedRecord(cwd: string, workspace: string, key: string, warn: (line: string) => void): AppliedRecord | undefined {
  const raw = readRecord(recordPath(cwd, "applied", workspace, key), cwd, warn);
  if (!raw) return undefined;
  const ok =
    raw.key === key &&
    raw.workspace === workspace &&
    typeof raw.id === "string" &&
    typeof raw.name === "string" &&
    typeof raw.api === "string" &&
    optionalString(raw.identity) &&
    (raw.pending === undefined || typeof raw.pending === "boolean");
  return ok ? (raw as unknown as AppliedRecord) : undefined;
}

/**
 * Every applied record of this folder, without hashing a file name: the plan-time read
 * reads them this way, so that a read loads no node:crypto (see ../io/sha256.ts). Records carry their
 * key and workspace verbatim; unreadable files are skipped.
 */
export function readAppliedRecords(cwd: string): AppliedRecord[] {
  let files: string[];
  try {
    files = readdirSync(path.join(cwd, HANDOFF_DIR)).filter((f) => f.endsWith(".applied.json"));
  } catch {
    return [];
  }
  const records: AppliedRecord[] = [];
  for (const file of files) {
    try {
      const raw = JSON.parse(readFileSync(path.join(cwd, HANDOFF_DIR, file), "utf8")) as Record<string, unknown>;
      const fields = [raw.key, raw.workspace, raw.id, raw.name, raw.api];
      if (fields.every((f) => typeof f === "string")) {
        records.push(raw as unknown as AppliedRecord);
      }
    } catch {
      // A record being replaced or damaged: the warnings it feeds are best effort.
    }
  }
  return records;
}

/** The file of an applied record, for messages that tell the user which file to delete. */
export function appliedRecordPath(cwd: string, workspace: string, key: string): string {
  return recordPath(cwd, "applied", workspace, key);
}

export function removeAppliedRecord(cwd: string, workspace: string, key: string): void {
  rmSync(recordPath(cwd, "applied", workspace, key), { force: true });
}
