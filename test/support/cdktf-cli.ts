// The real cdktf-cli, for the suites that run `cdktf synth/deploy/destroy` as a pipeline does. It
// is not a devDependency (about 420 MB installed, see CONTRIBUTING.md, "Tests"): the first use
// installs it into node_modules/.cache, later ones reuse it; CDKTF_CLI_BIN=<path> uses a given one.
import { spawn } from "node:child_process";
import path from "node:path";

import { repoRoot } from "./terraform";
const { cachedInstall } = require("../../scripts/cached-install.cjs");

export const CDKTF_CLI_VERSION = "0.21.0";

/** The cdktf binary: $CDKTF_CLI_BIN, or cdktf-cli installed (once) under node_modules/.cache. */
export function cdktfCli(): string {
  if (process.env.CDKTF_CLI_BIN) return process.env.CDKTF_CLI_BIN;
  return cachedInstall({
    root: repoRoot(),
    folder: `cdktf-cli-${CDKTF_CLI_VERSION}`,
    spec: `cdktf-cli@${CDKTF_CLI_VERSION}`,
    bin: "cdktf",
    onInstalled: (seconds: number, dir: string) =>
      console.log(`cdktf-cli@${CDKTF_CLI_VERSION} installed into ${path.relative(repoRoot(), dir)} in ${seconds.toFixed(1)} s`),
  });
}

export interface CliResult {
  code: number | null;
  /** stdout and stderr, interleaved as they came. */
  output: string;
}

export interface RunCdktfOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** SIGKILL after this long (the caller's test timeout should leave room for it). */
  readonly killAfterMs: number;
}

/** Runs `<cli> <args>`; resolves with its exit code and output, whatever they are. */
export function runCdktf(cli: string, args: string[], opts: RunCdktfOptions): Promise<CliResult> {
  return new Promise<CliResult>((resolve) => {
    const child = spawn(cli, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.killAfterMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** The output of a run that exited 0; throws with the output otherwise. */
export function expectOk(res: CliResult): string {
  if (res.code !== 0) throw new Error(`cdktf exited with ${res.code}:\n${res.output}`);
  return res.output;
}
