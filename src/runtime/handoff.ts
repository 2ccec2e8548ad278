import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HANDOFF_DIR } from "./protocol";

/**
 * What a destroy-time provisioner leaves for the create-time provisioner of the resource that
 * replaces it. Terraform replaces the `null_resource` on every rename or update (destroy first,
 * then create), and the destroy side is the only code that still sees the old name (`self`).
 * Ids and names are not secrets; nothing else is written.
 */
export interface Handoff {
  /** The id of the token the old resource managed, when the API could be asked for it. */
  readonly id?: string;
  /** The token's name as the old resource knew it. */
  readonly name: string;
  readonly releasedAt: string;
}

function handoffPath(cwd: string, key: string): string {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(key)) throw new Error(`invalid hand-off key "${key}"`);
  return path.join(cwd, HANDOFF_DIR, `${key}.json`);
}

/**
 * The destroy and create halves of one replacement run seconds apart in the same apply. A file
 * older than this was left by a destroy (or a failed apply) long ago; it no longer says anything
 * about what the configuration means, so it is dropped rather than followed.
 */
export const HANDOFF_MAX_AGE_MS = 60 * 60 * 1000;

export function writeHandoff(cwd: string, key: string, handoff: Handoff): void {
  const file = handoffPath(cwd, key);
  mkdirSync(path.dirname(file), { recursive: true });
  // Write then rename, so a reader never sees half a file.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(handoff) + "\n", { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * The hand-off for `key`, or undefined. A file that cannot be understood, or is older than
 * {@link HANDOFF_MAX_AGE_MS}, is reported and ignored.
 */
export function readHandoff(
  cwd: string,
  key: string,
  warn: (line: string) => void,
  now: number = Date.now(),
): Handoff | undefined {
  const file = handoffPath(cwd, key);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as Partial<Handoff>;
    if (typeof parsed.name !== "string" || (parsed.id !== undefined && typeof parsed.id !== "string")) {
      throw new Error("unexpected shape");
    }
    const releasedAt = Date.parse(String(parsed.releasedAt));
    if (!Number.isFinite(releasedAt) || now - releasedAt > HANDOFF_MAX_AGE_MS) {
      warn(`ignoring stale hand-off file ${path.relative(cwd, file)} (released ${String(parsed.releasedAt)})`);
      return undefined;
    }
    return { id: parsed.id, name: parsed.name, releasedAt: String(parsed.releasedAt) };
  } catch {
    warn(`ignoring unreadable hand-off file ${path.relative(cwd, file)}`);
    return undefined;
  }
}

export function removeHandoff(cwd: string, key: string): void {
  rmSync(handoffPath(cwd, key), { force: true });
}
