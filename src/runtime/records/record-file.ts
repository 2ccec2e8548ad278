import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

import { HANDOFF_DIR } from "../../protocol";
import { sha256Hex } from "../io/crypto";
import { readIfReadable, writePrivateFile } from "../io/private-file";

/*
 * The files of the hand-off folder that hold records (hand-offs, ./handoff.ts, and applied records,
 * ./applied-record.ts): one JSON object each, named after the construct's key and a digest of the
 * workspace, written whole (mode 0600) and read as absent when they cannot be read.
 */

export type RecordKind = "handoff" | "applied";

const APPLIED_SUFFIX = ".applied.json";

/** Whether a file name of the folder is a record of `kind`. */
const isRecordOf = (kind: RecordKind, file: string): boolean =>
  kind === "applied" ? file.endsWith(APPLIED_SUFFIX) : file.endsWith(".json") && !file.endsWith(APPLIED_SUFFIX);

/** The file of a record: `<key>.<workspace digest>.json` for a hand-off, `….applied.json` for an applied record. */
export function recordPath(cwd: string, kind: RecordKind, workspace: string, key: string): string {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(key)) throw new Error(`invalid hand-off key "${key}"`);
  // Workspace names are free text to us: hashed into the file name, kept verbatim inside.
  const ws = sha256Hex(workspace).slice(0, 16);
  return path.join(cwd, HANDOFF_DIR, `${key}.${ws}${kind === "handoff" ? ".json" : APPLIED_SUFFIX}`);
}

/**
 * Every record of `kind` in the folder, found by listing it (records carry their key and workspace
 * verbatim, so no file name is computed); a file being replaced, damaged or holding no JSON object
 * is skipped: what reads this way is best effort.
 */
export function listRecords(cwd: string, kind: RecordKind): Record<string, unknown>[] {
  let files: string[];
  try {
    files = readdirSync(path.join(cwd, HANDOFF_DIR)).filter((file) => isRecordOf(kind, file));
  } catch {
    return [];
  }
  const records: Record<string, unknown>[] = [];
  for (const file of files) {
    try {
      const parsed = JSON.parse(readFileSync(path.join(cwd, HANDOFF_DIR, file), "utf8")) as unknown;
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) records.push(parsed as Record<string, unknown>);
    } catch {
      // Being replaced, or damaged.
    }
  }
  return records;
}

export function writeRecord(file: string, record: object): void {
  writePrivateFile(file, JSON.stringify(record) + "\n");
}

/**
 * The record in `file`, or undefined. A file that cannot be read is taken as absent; one that is read
 * but holds no JSON object is damaged: it is warned about and ignored (the next write replaces it).
 */
export function readRecord(file: string, cwd: string, warn: (line: string) => void): Record<string, unknown> | undefined {
  const text = readIfReadable(file);
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    return parsed as Record<string, unknown>;
  } catch {
    warn(`ignoring unreadable hand-off file ${path.relative(cwd, file)}`);
    return undefined;
  }
}

/** A field a record may leave out. */
export const optionalString = (v: unknown): boolean => v === undefined || typeof v === "string";
