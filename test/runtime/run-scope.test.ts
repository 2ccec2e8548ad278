import { spawnSync } from "node:child_process";
import { parseProcStat, parsePsLine, runIdFrom, type ProcessInfo } from "../../src/runtime/run-scope";

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
});
