/**
 * The CPU time of each script process Terraform starts, measured from outside: a `node` first on
 * PATH that runs the real one under GNU time (`/usr/bin/time`), which appends the child's user and
 * system seconds and its command line to a log. Nothing in the library knows it is measured.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const GNU_TIME = "/usr/bin/time";

/** One script process: its command (`stack-read`, `token-writer`, ...) and CPU milliseconds (user + system). */
export interface ScriptCpu {
  readonly command: string;
  readonly cpuMs: number;
}

/** Why the measurement cannot run here, or undefined when it can. */
export function cpuShimUnavailable(): string | undefined {
  if (!existsSync(GNU_TIME)) return `${GNU_TIME} is missing (Debian: apt-get install time)`;
  try {
    execFileSync(GNU_TIME, ["-f", "%U", "true"], { stdio: "ignore" });
  } catch {
    return `${GNU_TIME} is not GNU time (no -f)`;
  }
  return undefined;
}

/**
 * Writes the shim into `dir` (a `node` that runs `realNode` under GNU time, appending to `log`) and
 * returns the PATH that puts it first.
 */
export function installCpuShim(dir: string, realNode: string, log: string, basePath: string): string {
  const shim = path.join(dir, "node");
  writeFileSync(shim, `#!/bin/sh\nexec ${GNU_TIME} -a -o '${log}' -f '%U %S %C' '${realNode}' "$@"\n`);
  chmodSync(shim, 0o755);
  return `${dir}${path.delimiter}${basePath}`;
}

/** The library's script processes the log holds, in the order they ended (`node -e` and others left out). */
export function scriptCpuTimes(log: string): ScriptCpu[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .flatMap((line) => {
      const m = /^(\d+\.\d+) (\d+\.\d+) \S+ \S*gpucloud-tf\.js (\S+)/.exec(line);
      return m ? [{ command: m[3], cpuMs: Math.round((Number(m[1]) + Number(m[2])) * 1000) }] : [];
    });
}
