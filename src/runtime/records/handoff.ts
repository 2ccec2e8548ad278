import { rmSync } from "node:fs";

import type { RunTicket } from "../../protocol";
import { sha256Hex } from "../io/crypto";
import { listRecords, optionalString, readRecord, recordPath, writeRecord } from "./record-file";

/**
 * What the destroy half of a replacement leaves for the create half of the same run (what a
 * create half remembers of the token it last applied is its applied record: ./applied-record.ts).
 *
 * Terraform replaces the `null_resource` on every rename or update; without create_before_destroy
 * the destroy half runs first, and it is the only code that still sees the old name (`self`), so
 * it writes a hand-off. Only the create half of the same run may take it over (see
 * {@link releasedInRun}), so a destroy followed by a deploy, another workspace or another stack
 * never inherits a token this way. Ids and names are not secrets; nothing else is written.
 */
export interface Handoff {
  /** The construct's key and the Terraform workspace: a hand-off is theirs alone. */
  readonly key: string;
  readonly workspace: string;
  /** The id of the token this folder last applied under the old name, when it has an applied record. */
  readonly id?: string;
  /** The token's name as the old resource knew it. */
  readonly name: string;
  /** The plan time of the run that released it (RunTicket.planTime). */
  readonly planTime: string;
  /**
   * The account the token lives on (see accountDigest): a token of one account is never handed
   * over on another, where a token of the same name may belong to someone else.
   */
  readonly api: string;
  readonly releasedAt: string;
  /**
   * Set by the create half before it writes to the API: the plan time of the run that took the
   * token over and the name it renames it to. A claimed hand-off whose write failed is honoured
   * by a later run with the same target name, so the retry finishes the rename.
   */
  readonly claimedBy?: string;
  readonly targetName?: string;
}

/** A short digest of one hand-off, as a ticket lists the earlier ones (see RunTicket.earlier). */
function handoffDigest(handoff: { readonly key: unknown; readonly releasedAt: unknown }): string {
  return sha256Hex(`${String(handoff.key)}\n${String(handoff.releasedAt)}`).slice(0, 12);
}

/**
 * Whether `handoff` was released by the run of `ticket`: the same plan time (a destroy half can have
 * no other mark of its run), and not among the hand-offs that already carried it when the run's
 * plan-time read ran (an earlier run whose plan fell in the same second). The plan-time read only
 * reads hand-offs, so a plan running beside an apply (without a state lock) cannot undo the apply's.
 */
export function releasedInRun(handoff: Handoff, ticket: RunTicket | undefined): boolean {
  if (ticket?.planTime === undefined || handoff.planTime !== ticket.planTime) return false;
  return !(ticket.earlier ?? []).includes(handoffDigest(handoff));
}

/**
 * The digests of this workspace's hand-offs in the folder that carry `planTime` (see
 * RunTicket.earlier): almost always none. Reads only; what it cannot read it skips.
 */
export function handoffsOfPlanTime(cwd: string, workspace: string, planTime: string): string[] {
  return listRecords(cwd, "handoff")
    .filter((raw) => raw.workspace === workspace && raw.planTime === planTime)
    .map((raw) => handoffDigest(raw as { key: unknown; releasedAt: unknown }));
}

export function writeHandoff(cwd: string, handoff: Handoff): void {
  writeRecord(recordPath(cwd, "handoff", handoff.workspace, handoff.key), handoff);
}

/**
 * The hand-off for this workspace and key, or undefined. A file that cannot be understood, or
 * that belongs to another key or workspace (a digest collision, a copied folder), is ignored.
 */
export function readHandoff(cwd: string, workspace: string, key: string, warn: (line: string) => void): Handoff | undefined {
  const raw = readRecord(recordPath(cwd, "handoff", workspace, key), cwd, warn);
  if (!raw) return undefined;
  const ok =
    raw.key === key &&
    raw.workspace === workspace &&
    typeof raw.name === "string" &&
    typeof raw.planTime === "string" &&
    typeof raw.releasedAt === "string" &&
    typeof raw.api === "string" &&
    optionalString(raw.id) &&
    optionalString(raw.claimedBy) &&
    optionalString(raw.targetName);
  if (!ok) {
    warn(`ignoring a damaged hand-off file, or one of another workspace, for key ${key}`);
    return undefined;
  }
  return raw as unknown as Handoff;
}

export function removeHandoff(cwd: string, workspace: string, key: string): void {
  rmSync(recordPath(cwd, "handoff", workspace, key), { force: true });
}
