import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  readAppliedRecord,
  readHandoff,
  removeAppliedRecord,
  removeHandoff,
  writeAppliedRecord,
  writeHandoff,
  type Handoff,
} from "../../src/runtime/handoff";

const dir = () => mkdtempSync(path.join(tmpdir(), "handoff-"));
const record = (over: Partial<Handoff> = {}): Handoff => ({
  key: "c8abc",
  workspace: "default",
  id: "tok_1",
  name: "ci",
  runId: "100@5",
  releasedAt: new Date().toISOString(),
  ...over,
});

describe("hand-off files", () => {
  test("round-trip per workspace and key, and are removed", () => {
    const cwd = dir();
    writeHandoff(cwd, record());
    writeHandoff(cwd, record({ workspace: "prod", id: "tok_2" }));
    expect(readHandoff(cwd, "default", "c8abc", () => undefined)).toMatchObject({ id: "tok_1", runId: "100@5" });
    expect(readHandoff(cwd, "prod", "c8abc", () => undefined)).toMatchObject({ id: "tok_2" });
    expect(readHandoff(cwd, "staging", "c8abc", () => undefined)).toBeUndefined();
    removeHandoff(cwd, "default", "c8abc");
    expect(readHandoff(cwd, "default", "c8abc", () => undefined)).toBeUndefined();
    expect(readHandoff(cwd, "prod", "c8abc", () => undefined)).toMatchObject({ id: "tok_2" });
  });

  test("keeps the claim", () => {
    const cwd = dir();
    writeHandoff(cwd, record({ claimedBy: "200@9", targetName: "ci-2" }));
    expect(readHandoff(cwd, "default", "c8abc", () => undefined)).toMatchObject({ claimedBy: "200@9", targetName: "ci-2" });
  });

  test("ignores an unreadable file or one whose content names another workspace, with a warning", () => {
    const cwd = dir();
    const warnings: string[] = [];
    writeHandoff(cwd, record());
    const [file] = readdirSync(path.join(cwd, ".gpucloud-handoff"));
    writeFileSync(path.join(cwd, ".gpucloud-handoff", file), JSON.stringify({ ...record(), workspace: "other" }));
    expect(readHandoff(cwd, "default", "c8abc", (w) => warnings.push(w))).toBeUndefined();
    writeFileSync(path.join(cwd, ".gpucloud-handoff", file), "{not json");
    expect(readHandoff(cwd, "default", "c8abc", (w) => warnings.push(w))).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining("another workspace"), expect.stringContaining("unreadable")]);
  });

  test("refuses keys that could escape the folder", () => {
    expect(() => writeHandoff(dir(), record({ key: "../x" }))).toThrow(/invalid hand-off key/);
    expect(existsSync(path.join(tmpdir(), "x.json"))).toBe(false);
  });

  test("applied records are separate records, per workspace", () => {
    const cwd = dir();
    writeAppliedRecord(cwd, { key: "c8abc", workspace: "default", id: "tok_9", name: "new", at: "now" });
    expect(readHandoff(cwd, "default", "c8abc", () => undefined)).toBeUndefined();
    expect(readAppliedRecord(cwd, "prod", "c8abc", () => undefined)).toBeUndefined();
    expect(readAppliedRecord(cwd, "default", "c8abc", () => undefined)).toMatchObject({ id: "tok_9", name: "new" });
    removeAppliedRecord(cwd, "default", "c8abc");
    expect(readAppliedRecord(cwd, "default", "c8abc", () => undefined)).toBeUndefined();
  });
});
