import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { accountDigest } from "../../src/runtime/account-identity";
import { readAppliedRecord, removeAppliedRecord, writeAppliedRecord } from "../../src/runtime/records/applied-record";
import {
  type Handoff,
  handoffsOfPlanTime,
  readHandoff,
  releasedInRun,
  removeHandoff,
  writeHandoff,
} from "../../src/runtime/records/handoff";

const dir = () => mkdtempSync(path.join(tmpdir(), "handoff-"));
const record = (over: Partial<Handoff> = {}): Handoff => ({
  key: "c8abc",
  workspace: "default",
  id: "tok_1",
  name: "ci",
  planTime: "100@5",
  api: "0123456789abcdef",
  releasedAt: new Date().toISOString(),
  ...over,
});

describe("hand-off files", () => {
  test("round-trip per workspace and key, and are removed", () => {
    const cwd = dir();
    writeHandoff(cwd, record());
    writeHandoff(cwd, record({ workspace: "prod", id: "tok_2" }));
    expect(readHandoff(cwd, "default", "c8abc", () => undefined)).toMatchObject({ id: "tok_1", planTime: "100@5" });
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
    // A read never deletes: the file stays for the next write to replace.
    expect(readFileSync(path.join(cwd, ".gpucloud-handoff", file), "utf8")).toBe("{not json");
  });

  test("a hand-off is its run's when it has the run's plan time and was not there when the run's plan-time read looked", () => {
    const cwd = dir();
    const planTime = "2026-11-01T10:00:00Z";
    const before = record({ key: "c8a", planTime, releasedAt: "2026-11-01T10:00:00.100Z" });
    writeHandoff(cwd, before);
    writeHandoff(cwd, record({ key: "c8b", planTime: "2026-11-01T09:59:59Z" }));
    writeHandoff(cwd, record({ key: "c8c", workspace: "prod", planTime }));
    // What the plan-time read sees: this workspace's hand-offs of its own plan time, read only.
    const earlier = handoffsOfPlanTime(cwd, "default", planTime);
    expect(earlier).toHaveLength(1);
    const ticket = { id: "f".repeat(32), planTime, earlier };
    // An earlier run whose plan fell in the same second.
    expect(releasedInRun(before, ticket)).toBe(false);
    // Released after the read by this run's destroy half.
    expect(releasedInRun(record({ key: "c8a", planTime, releasedAt: "2026-11-01T10:00:02.000Z" }), ticket)).toBe(true);
    expect(releasedInRun(record({ planTime: "2026-11-01T09:59:59Z" }), ticket)).toBe(false);
    // A read that may have run during the apply: the plan time alone.
    expect(releasedInRun(before, { ...ticket, earlier: undefined })).toBe(true);
    // No ticket, or no plan time: never.
    expect(releasedInRun(before, undefined)).toBe(false);
    expect(releasedInRun(record({ planTime: "" }), { id: ticket.id })).toBe(false);
    expect(handoffsOfPlanTime(dir(), "default", planTime)).toEqual([]);
  });

  test("refuses keys that could escape the folder", () => {
    expect(() => writeHandoff(dir(), record({ key: "../x" }))).toThrow(/invalid hand-off key/);
    expect(existsSync(path.join(tmpdir(), "x.json"))).toBe(false);
  });

  test("applied records are separate records, per workspace", () => {
    const cwd = dir();
    writeAppliedRecord(cwd, { key: "c8abc", workspace: "default", id: "tok_9", name: "new", at: "now", api: "0123456789abcdef" });
    expect(readHandoff(cwd, "default", "c8abc", () => undefined)).toBeUndefined();
    expect(readAppliedRecord(cwd, "prod", "c8abc", () => undefined)).toBeUndefined();
    expect(readAppliedRecord(cwd, "default", "c8abc", () => undefined)).toMatchObject({ id: "tok_9", name: "new" });
    removeAppliedRecord(cwd, "default", "c8abc");
    expect(readAppliedRecord(cwd, "default", "c8abc", () => undefined)).toBeUndefined();
  });
});

describe("accountDigest", () => {
  const digest = (url: string) => accountDigest("GPUCLOUD_", url);
  test("scheme and host case, a default port, spaces and trailing slashes do not count", () => {
    const first = digest("https://api.example.com/v1");
    expect(digest(" HTTPS://API.Example.COM/v1// ")).toBe(first);
    expect(digest("https://api.example.com:443/v1/")).toBe(first);
    expect(digest("http://api.example.com:80")).toBe(digest("http://api.example.com/"));
  });

  test("the path's case counts: /TenantA and /tenanta are two APIs", () => {
    expect(digest("https://api.example.com/TenantA")).not.toBe(digest("https://api.example.com/tenanta"));
    expect(digest("https://api.example.com:8443/v1")).not.toBe(digest("https://api.example.com/v1"));
  });
});
