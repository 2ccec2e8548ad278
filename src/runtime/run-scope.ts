import type { execFileSync as ExecFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * Identity of the Terraform run that started this script, so that the destroy and create halves
 * of one replacement (which Terraform runs in one `terraform apply` process) can recognise each
 * other, while a later run, another workspace's run or a run on another machine cannot.
 *
 * local-exec runs `/bin/sh -c <command>` as a child of the terraform process, and node is a
 * child of that shell (or replaces it, when the shell execs). So the run is the first ancestor
 * that is not a shell. A pid alone can be reused; pid plus the process's start time cannot
 * (within one boot), so both make the id.
 */

/** Process names skipped on the way up: the shells local-exec may use as its interpreter. */
const SHELL_NAMES: ReadonlySet<string> = new Set(["sh", "dash", "bash", "ash", "zsh", "busybox", "ksh", "mksh"]);

export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  /** Start time in a form that is stable for the process's life (Linux: clock ticks since boot). */
  readonly startTime: string;
  /** The executable's short name. */
  readonly comm: string;
}

/** Reads one process's info, or undefined when it cannot be read. */
export type ProcessReader = (pid: number) => ProcessInfo | undefined;

/**
 * Parses /proc/<pid>/stat. The name (field 2) is in parentheses and may itself hold spaces or
 * parentheses, so the fields after it are counted from the last ")".
 */
export function parseProcStat(text: string): ProcessInfo | undefined {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  const comm = text.slice(open + 1, close);
  // After ")": field 3 (state) is rest[0], so field n is rest[n - 3].
  const rest = text.slice(close + 1).trim().split(/\s+/);
  const ppid = Number(rest[4 - 3]);
  const startTime = rest[22 - 3];
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !startTime) return undefined;
  return { pid, ppid, startTime, comm };
}

function readProcStat(pid: number): ProcessInfo | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** Parses `ps -o ppid=,lstart=,comm= -p <pid>`: "  123 Sun Nov 22 04:39:58 2026 terraform". */
export function parsePsLine(pid: number, line: string): ProcessInfo | undefined {
  const m = /^\s*(\d+)\s+(\S+\s+\S+\s+\d+\s+[\d:]+\s+\d+)\s+(.+?)\s*$/.exec(line);
  if (!m) return undefined;
  const comm = m[3].split("/").pop() ?? m[3];
  return { pid, ppid: Number(m[1]), startTime: m[2].replace(/\s+/g, " "), comm };
}

function readPs(pid: number): ProcessInfo | undefined {
  try {
    // Loaded here, not at the top: node:child_process (and node:dgram with it) costs every run of
    // the script a few ms to load, and only this fallback for systems without /proc needs it.
    const { execFileSync } = require("node:child_process") as { execFileSync: typeof ExecFileSync };
    const line = execFileSync("ps", ["-o", "ppid=,lstart=,comm=", "-p", String(pid)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 5_000,
    });
    return parsePsLine(pid, line.trim());
  } catch {
    return undefined;
  }
}

/** /proc where there is one (Linux), `ps` elsewhere. */
function defaultProcessReader(pid: number): ProcessInfo | undefined {
  return readProcStat(pid) ?? readPs(pid);
}

function isShell(comm: string): boolean {
  return SHELL_NAMES.has(comm.replace(/^-/, ""));
}

/**
 * The run id seen from process `startPid` (default: this process's parent): the first ancestor,
 * starting with `startPid` itself, that is not a shell, as `<pid>@<start time>`. When the
 * process table cannot be read, the parent pid alone (weaker, but still scoped to one run).
 */
export function runIdFrom(startPid: number, read: ProcessReader = defaultProcessReader): string {
  let pid = startPid;
  for (let depth = 0; depth < 16 && pid > 1; depth++) {
    const info = read(pid);
    if (!info) break;
    if (!isShell(info.comm)) return `${info.pid}@${info.startTime}`;
    pid = info.ppid;
  }
  return `${startPid}@unknown`;
}

let cached: string | undefined;

/** The id of the Terraform run this script belongs to (computed once per process). */
export function currentRunId(): string {
  cached ??= runIdFrom(process.ppid);
  return cached;
}
