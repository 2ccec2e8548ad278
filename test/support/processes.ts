// Programs run as processes: one child run to its end, and a program bundled from the sources,
// as the suites that start the script or a CLI need them.
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import path from "node:path";

import { buildSync } from "esbuild";

/**
 * The node that runs the script Terraform runs, in the tests that start it: the binary named by
 * GPUCLOUD_TEST_NODE (.ci/run sets it to each supported Node line in turn), else the node that
 * runs the tests.
 */
export const SCRIPT_NODE = process.env.GPUCLOUD_TEST_NODE || process.execPath;
/** PATH with SCRIPT_NODE's folder first, so that `node` in a synthesized command is that one. */
export const SCRIPT_PATH = [path.dirname(SCRIPT_NODE), process.env.PATH ?? ""].join(path.delimiter);

/**
 * Keeps what a child printed on stderr in the file GPUCLOUD_TEST_STDERR_LOG names, when set:
 * .ci/run fails on any line of it in which Node reports a warning or an unknown flag.
 */
export function keepStderr(stderr: string): void {
  const log = process.env.GPUCLOUD_TEST_STDERR_LOG;
  if (log && stderr !== "") appendFileSync(log, stderr.endsWith("\n") ? stderr : `${stderr}\n`);
}

export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly cwd?: string;
  readonly env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed; without it stdin is /dev/null. */
  readonly stdin?: string;
}

/** Runs `file` with `args` (no shell) and resolves with its exit code and output. */
export function runProcess(file: string, args: readonly string[], opts: RunOptions): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: [opts.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      keepStderr(stderr);
      resolve({ code, stdout, stderr });
    });
    if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  });
}

/**
 * Bundles `entry` (a program in src/) with its dependencies into `outfile`, so that a test runs
 * the program as one file from the sources, whatever lib/ holds.
 */
export function bundleProgram(entry: string, outfile: string): void {
  buildSync({ entryPoints: [entry], outfile, bundle: true, platform: "node", target: "node20", format: "cjs", logLevel: "silent" });
}

/** What a script printed on stderr besides its own `gpucloud:` lines: what Node itself said. */
export function nodeOwnLines(stderr: string): string {
  return stderr
    .split("\n")
    .filter((line) => !line.startsWith("gpucloud:"))
    .join("\n");
}

/**
 * `text` without the script's warning about an untested Node line (src/runtime/io/node-line.ts): the
 * suites run on whatever node the machine has, and tests that expect no warning mean the library's.
 * Only the warning goes, not its line: a text joined into one line keeps everything else.
 */
export function withoutNodeLineWarning(text: string): string {
  return text.replace(/(gpucloud: )?WARNING: node \S+ runs this script, but it is tested on .*? the process that runs terraform/g, "");
}
