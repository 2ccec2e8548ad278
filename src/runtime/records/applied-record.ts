import { rmSync } from "node:fs";

import { listRecords, optionalString, readRecord, recordPath, writeRecord } from "./record-file";

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
  /** Its API address, as messages name it (see apiAddress). */
  readonly apiUrl?: string;
  /** The construct's path. */
  readonly path?: string;
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

export function writeAppliedRecord(cwd: string, record: AppliedRecord): void {
  writeRecord(recordPath(cwd, "applied", record.workspace, record.key), record);
}

/** The record `raw` holds, when it is one (of `key` and `workspace`, when given); undefined otherwise. */
function appliedRecordOf(raw: Record<string, unknown>, key?: string, workspace?: string): AppliedRecord | undefined {
  const ok =
    typeof raw.key === "string" &&
    typeof raw.workspace === "string" &&
    (key === undefined || raw.key === key) &&
    (workspace === undefined || raw.workspace === workspace) &&
    typeof raw.id === "string" &&
    typeof raw.name === "string" &&
    typeof raw.api === "string" &&
    optionalString(raw.identity) &&
    optionalString(raw.apiUrl) &&
    optionalString(raw.path) &&
    (raw.pending === undefined || typeof raw.pending === "boolean");
  return ok ? (raw as unknown as AppliedRecord) : undefined;
}

export function readAppliedRecord(cwd: string, workspace: string, key: string, warn: (line: string) => void): AppliedRecord | undefined {
  const raw = readRecord(recordPath(cwd, "applied", workspace, key), cwd, warn);
  return raw ? appliedRecordOf(raw, key, workspace) : undefined;
}

/** Every applied record of this folder (see listRecords); what is no record is skipped. */
export function readAppliedRecords(cwd: string): AppliedRecord[] {
  return listRecords(cwd, "applied").flatMap((raw) => appliedRecordOf(raw) ?? []);
}

export function removeAppliedRecord(cwd: string, workspace: string, key: string): void {
  rmSync(recordPath(cwd, "applied", workspace, key), { force: true });
}
