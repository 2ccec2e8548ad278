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

/**
 * Process names that adopt orphans: init, and the usual subreapers (a user's systemd, container
 * inits). A shell's or node's first non-shell ancestor with one of these names means that the
 * terraform process that started it is gone and it was reparented.
 */
const REAPER_NAMES: ReadonlySet<string> = new Set(["init", "systemd", "tini", "dumb-init", "docker-init", "launchd", "s6-svscan", "runsvdir", "catatonit"]);

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
 * What this script knows of its terraform run:
 * - `found`: the first ancestor that is not a shell, alive: the run's id is certain.
 * - `unreadable`: the process table cannot be read (no /proc and no usable `ps`). The id falls
 *   back to `<parent pid>@unknown`, which the two halves of one replacement do not share (each
 *   has its own shell), so no hand-off can pass between them: a rename needs `previousNames`.
 * - `orphaned`: the ancestry ends at pid 1, at a process that adopts orphans (a user's systemd, a
 *   container's init), or breaks on the way up (a process of it vanished) before a non-shell ancestor: the terraform run that started this script is gone (killed, or Ctrl-C'd
 *   between the two halves). Its state will not record anything this script does, so the
 *   script must change nothing.
 */
export type RunScopeKind = "found" | "unreadable" | "orphaned";

export interface RunScope {
  readonly kind: RunScopeKind;
  /** `<pid>@<start time>` when found; `<parent pid>@unknown` otherwise. */
  readonly id: string;
}

/**
 * The run seen from process `startPid` (default: this process's parent): the first ancestor,
 * starting with `startPid` itself, that is not a shell, as `<pid>@<start time>`.
 */
export function runScopeFrom(startPid: number, read: ProcessReader = defaultProcessReader): RunScope {
  const fallback = `${startPid}@unknown`;
  let pid = startPid;
  for (let depth = 0; depth < 16; depth++) {
    // Reparented to init (or a container's pid 1): the process that started us is gone.
    if (pid <= 1) return { kind: "orphaned", id: fallback };
    const info = read(pid);
    // The very first read failing means the table cannot be read; a later one, that the
    // process exited while we walked up (its terraform is going or gone).
    if (!info) return { kind: depth === 0 ? "unreadable" : "orphaned", id: fallback };
    if (REAPER_NAMES.has(info.comm)) return { kind: "orphaned", id: fallback };
    if (!isShell(info.comm)) return { kind: "found", id: `${info.pid}@${info.startTime}` };
    pid = info.ppid;
  }
  return { kind: "unreadable", id: fallback };
}

/** The run id alone (see {@link runScopeFrom}). */
export function runIdFrom(startPid: number, read: ProcessReader = defaultProcessReader): string {
  return runScopeFrom(startPid, read).id;
}

/**
 * A switch for tests only: `GPUCLOUD_TEST_ONLY_RUN_ANCESTRY=<command>=orphaned` (or
 * `=unreadable`) makes that provisioner command see that ancestry, so that real-Terraform
 * tests can put a create half in the place of one whose terraform was killed, deterministically.
 * Its name says what it is for; the script says so in the log whenever it is honoured.
 */
export const TEST_ANCESTRY_ENV = "GPUCLOUD_TEST_ONLY_RUN_ANCESTRY";

export function testAncestry(env: NodeJS.ProcessEnv, command: string): RunScopeKind | undefined {
  const value = env[TEST_ANCESTRY_ENV];
  if (!value) return undefined;
  const m = /^([a-z-]+)=(orphaned|unreadable)$/.exec(value);
  return m && m[1] === command ? (m[2] as RunScopeKind) : undefined;
}

let cached: RunScope | undefined;

/** The terraform run this script belongs to (computed once per process; see {@link stillInRun}). */
export function currentRunScope(): RunScope {
  cached ??= runScopeFrom(process.ppid);
  return cached;
}

/** The id of the Terraform run this script belongs to (computed once per process). */
export function currentRunId(): string {
  return currentRunScope().id;
}

/**
 * Asked again right before a write: is the run found at the start still this script's run?
 * False once the script has been reparented (its terraform or shell killed meanwhile).
 */
export function stillInRun(): boolean {
  const first = currentRunScope();
  if (first.kind !== "found") return first.kind === "unreadable" && process.ppid !== 1;
  const now = runScopeFrom(process.ppid);
  return now.kind === "found" && now.id === first.id;
}
