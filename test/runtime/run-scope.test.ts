import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseProcStat, parsePsLine, runIdFrom, runScopeFrom, testAncestry, type ProcessInfo } from "../../src/runtime/run-scope";

describe("run scope", () => {
  test("parses /proc/<pid>/stat, names with spaces and parentheses included", () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3)); // field n holds "n"
    const info = parseProcStat(`4242 (odd (name) x) ${fields.join(" ")}`);
    expect(info).toEqual({ pid: 4242, ppid: 4, startTime: "22", comm: "odd (name) x" });
    expect(parseProcStat("garbage")).toBeUndefined();
  });

  test("parses a ps line", () => {
    expect(parsePsLine(7, "  123 Sun Nov 22 04:39:58 2026 /usr/bin/terraform")).toEqual({
      pid: 7,
      ppid: 123,
      startTime: "Sun Nov 22 04:39:58 2026",
      comm: "terraform",
    });
  });

  const table = (rows: ProcessInfo[]) => (pid: number) => rows.find((r) => r.pid === pid);

  test("skips shells up to the first other ancestor: both halves of a run agree", () => {
    const read = table([
      { pid: 30, ppid: 20, startTime: "900", comm: "sh" },
      { pid: 31, ppid: 20, startTime: "950", comm: "dash" },
      { pid: 32, ppid: 31, startTime: "951", comm: "bash" },
      { pid: 20, ppid: 1, startTime: "500", comm: "terraform" },
    ]);
    expect(runIdFrom(30, read)).toBe("20@500");
    expect(runIdFrom(32, read)).toBe("20@500");
    expect(runIdFrom(20, read)).toBe("20@500");
  });

  test("another run of the same pid (reused) differs by start time", () => {
    const a = runIdFrom(20, table([{ pid: 20, ppid: 1, startTime: "500", comm: "terraform" }]));
    const b = runIdFrom(20, table([{ pid: 20, ppid: 1, startTime: "777", comm: "terraform" }]));
    expect(a).not.toBe(b);
  });

  test("falls back to the start pid when the table cannot be read", () => {
    expect(runIdFrom(55, () => undefined)).toBe("55@unknown");
  });

  test("on this machine, node under sh -c reports the same run as node run directly by this process", () => {
    const script = `const { runIdFrom } = require(${JSON.stringify(require.resolve("../../lib/runtime/run-scope.js"))}); process.stdout.write(runIdFrom(process.ppid));`;
    const direct = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
    // `; true` keeps sh from exec-ing node, so node's parent is the shell.
    const viaShell = spawnSync("/bin/sh", ["-c", `"${process.execPath}" -e '${script}'; true`], { encoding: "utf8" });
    expect(direct.stdout).toMatch(/^\d+@\d+$/);
    expect(viaShell.stdout).toBe(direct.stdout);
    expect(direct.stdout.startsWith(`${process.pid}@`)).toBe(true);
  });

  test("found, unreadable or orphaned: a chain that ends at pid 1 (or breaks on the way up) has no terraform", () => {
    const read = table([
      { pid: 40, ppid: 20, startTime: "900", comm: "sh" },
      { pid: 20, ppid: 1, startTime: "500", comm: "terraform" },
      // The shell of a killed terraform, reparented to init.
      { pid: 41, ppid: 1, startTime: "901", comm: "sh" },
      // A shell whose parent vanished while the chain was read.
      { pid: 42, ppid: 77, startTime: "902", comm: "bash" },
      // Reparented to a subreaper (a user's systemd) rather than to pid 1.
      { pid: 43, ppid: 9, startTime: "903", comm: "sh" },
      { pid: 9, ppid: 1, startTime: "10", comm: "systemd" },
    ]);
    expect(runScopeFrom(40, read)).toEqual({ kind: "found", id: "20@500" });
    expect(runScopeFrom(41, read)).toEqual({ kind: "orphaned", id: "41@unknown" });
    expect(runScopeFrom(1, read)).toEqual({ kind: "orphaned", id: "1@unknown" });
    expect(runScopeFrom(42, read)).toEqual({ kind: "orphaned", id: "42@unknown" });
    expect(runScopeFrom(43, read)).toEqual({ kind: "orphaned", id: "43@unknown" });
    expect(runScopeFrom(55, () => undefined)).toEqual({ kind: "unreadable", id: "55@unknown" });
  });

  test("the test-only ancestry switch names one command and one kind, nothing else", () => {
    expect(testAncestry({}, "token-apply")).toBeUndefined();
    expect(testAncestry({ GPUCLOUD_TEST_ONLY_RUN_ANCESTRY: "token-apply=orphaned" }, "token-apply")).toBe("orphaned");
    expect(testAncestry({ GPUCLOUD_TEST_ONLY_RUN_ANCESTRY: "token-apply=orphaned" }, "token-release")).toBeUndefined();
    expect(testAncestry({ GPUCLOUD_TEST_ONLY_RUN_ANCESTRY: "token-release=unreadable" }, "token-release")).toBe("unreadable");
    expect(testAncestry({ GPUCLOUD_TEST_ONLY_RUN_ANCESTRY: "1" }, "token-apply")).toBeUndefined();
    expect(testAncestry({ GPUCLOUD_TEST_ONLY_RUN_ANCESTRY: "token-apply=found" }, "token-apply")).toBeUndefined();
  });

  test("a real orphan: node whose shell exited before it looked sees no terraform ancestor", () => {
    const lib = JSON.stringify(require.resolve("../../lib/runtime/run-scope.js"));
    // The shell starts node in the background and exits; node looks once it has been reparented.
    const script = `setTimeout(() => { const { runScopeFrom } = require(${lib}); require("fs").writeFileSync(process.argv[1], JSON.stringify(runScopeFrom(process.ppid))); }, 300);`;
    const out = path.join(mkdtempSync(path.join(tmpdir(), "run-scope-")), "scope.json");
    spawnSync("/bin/sh", ["-c", `"${process.execPath}" -e '${script}' "${out}" >/dev/null 2>&1 &`], { encoding: "utf8" });
    const deadline = Date.now() + 10_000;
    while (!existsSync(out) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    const scope = JSON.parse(readFileSync(out, "utf8")) as { kind: string };
    // Reparented to pid 1 or to a subreaper: unless that subreaper is a process this list does
    // not know (then "found"), it is orphaned. Jest is no subreaper, so here it must be orphaned.
    expect(scope.kind).toBe("orphaned");
  });
});
