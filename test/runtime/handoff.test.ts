import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { accountDigest } from "../../src/runtime/account-identity";
import { readAppliedRecord, removeAppliedRecord, writeAppliedRecord } from "../../src/runtime/records/applied-record";
import { type Handoff, readHandoff, removeHandoff, retireHandoffs, writeHandoff } from "../../src/runtime/records/handoff";

const dir = () => mkdtempSync(path.join(tmpdir(), "handoff-"));
const record = (over: Partial<Handoff> = {}): Handoff => ({
  key: "c8abc",
  workspace: "default",
  id: "tok_1",
  name: "ci",
  runId: "100@5",
  api: "0123456789abcdef",
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

  const noWarning = (line: string) => {
    throw new Error(`unexpected warning: ${line}`);
  };

  test("a plan-time read retires what earlier runs of its workspace left unclaimed, never a claim or another workspace's", () => {
    const cwd = dir();
    writeHandoff(cwd, record({ key: "c8a", runId: "2026-11-01T10:00:00Z" }));
    writeHandoff(cwd, record({ key: "c8b", runId: "2026-11-01T10:05:00Z" }));
    writeHandoff(cwd, record({ key: "c8c", runId: "2026-11-01T10:00:00Z", claimedBy: "2026-11-01T10:00:00Z", targetName: "ci-2" }));
    writeHandoff(cwd, record({ key: "c8d", workspace: "prod", runId: "2026-11-01T10:00:00Z" }));
    const read = (key: string, workspace = "default") => readHandoff(cwd, workspace, key, () => undefined);

    // A read that may run during its own apply (deferred): only other runs' hand-offs.
    expect(retireHandoffs(cwd, "default", "2026-11-01T10:05:00Z", false, noWarning)).toBe(1);
    expect(read("c8a")?.retired).toBe(true);
    expect(read("c8b")?.retired).toBeUndefined();
    // A read while planning precedes every provisioner of its run: all of them, even of its own second.
    expect(retireHandoffs(cwd, "default", "2026-11-01T10:05:00Z", true, noWarning)).toBe(1);
    expect(read("c8b")?.retired).toBe(true);
    expect(read("c8c")).toMatchObject({ claimedBy: "2026-11-01T10:00:00Z", targetName: "ci-2" });
    expect(read("c8c")?.retired).toBeUndefined();
    expect(read("c8d", "prod")?.retired).toBeUndefined();
    // Applied records and locks are not hand-offs.
    writeAppliedRecord(cwd, {
      key: "c8a",
      workspace: "default",
      id: "tok_1",
      name: "ci",
      at: new Date().toISOString(),
      api: "0123456789abcdef",
    });
    expect(retireHandoffs(cwd, "default", "x", true, noWarning)).toBe(0);
    expect(readAppliedRecord(cwd, "default", "c8a", () => undefined)).toMatchObject({ id: "tok_1" });
    expect(retireHandoffs(dir(), "default", "x", true, noWarning)).toBe(0);
  });

  test("a hand-off that cannot be rewritten is warned about once and left: retiring never fails the plan", () => {
    const cwd = dir();
    writeHandoff(cwd, record({ key: "c8e", runId: "2026-11-01T10:00:00Z" }));
    writeHandoff(cwd, record({ key: "c8f", runId: "2026-11-01T10:00:00Z" }));
    writeHandoff(cwd, record({ key: "c8g", runId: "2026-11-01T10:00:00Z" }));
    // A folder where the rewrite's temporary file goes: the write fails, for root too.
    const handoffs = readdirSync(path.join(cwd, ".gpucloud-handoff")).sort();
    for (const f of handoffs.slice(0, 2)) mkdirSync(path.join(cwd, ".gpucloud-handoff", `${f}.${process.pid}.tmp`));
    const warn = jest.fn();
    expect(retireHandoffs(cwd, "default", "2026-11-01T10:05:00Z", true, warn)).toBe(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(
      /could not mark a hand-off of an earlier terraform run as spent \(\.gpucloud-handoff\/.*\); going on/,
    );
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
