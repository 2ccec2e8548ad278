// Running real Terraform offline, against the provider doubles (tools/provider-doubles).
//
// Used by Jest suites and by repo scripts (the demo), so nothing here touches Jest globals
// until describeWithTerraform() is called.
//
// Typical suite:
//
//   import { describeWithTerraform, ensureProviderDoublesBuilt, startProviderDoubles, TerraformRunner } from "../support/terraform";
//
//   describeWithTerraform("my stack", () => {
//     let doubles: ProviderDoubles;
//     beforeAll(async () => {
//       ensureProviderDoublesBuilt();              // bundles the doubles if missing or stale
//       doubles = await startProviderDoubles();    // one process for the whole file
//     });
//     afterAll(async () => {
//       await doubles?.stop();
//       removeTempDirs();
//     });
//     it("plans", async () => {
//       // `doubles`: the runner opens a doubles session for stackDir and env, so external
//       // programs run where and how they would under Terraform (relative paths included).
//       const tf = new TerraformRunner(stackDir, { doubles, env });
//       await tf.init({ check: true });
//       const { plan } = await tf.plan({ check: true });
//       expect(resourceActions(plan!)).toEqual({ "null_resource.x": ["create"] });
//     });
//   });
//
// Skipping and CI (./suite-needs.ts): without a usable `terraform` binary the suite is skipped
// with a console warning (or fails, if TERRAFORM_TESTS_REQUIRED=1). When a suite really runs, one line
// "<ISO time>\t<terraform version>\t<suite name>" is appended to the file named by
// TERRAFORM_TESTS_MARKER (if set), so CI can tell "terraform present but nothing ran".
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { describeNeeding, type SuiteNeed } from "./suite-needs";

// ---------------------------------------------------------------------------------------------
// Locations

/** Repository root: the nearest folder above this file holding a package.json. */
export function repoRoot(start: string = __dirname): string {
  let dir = path.resolve(start);
  for (;;) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${start}`);
    dir = parent;
  }
}

export const PROVIDER_DOUBLES_ENTRY = "tools/provider-doubles/main.ts";
export const PROVIDER_DOUBLES_BUNDLE = "build/tools/provider-doubles.js";

/** The terraform binary: $TERRAFORM_BIN or `terraform` on PATH. */
export function terraformBinary(): string {
  return process.env.TERRAFORM_BIN || "terraform";
}

// An empty CLI configuration, so that no ~/.terraformrc (or its absence) matters. One stable
// file per user rather than a temp dir per process: Jest may kill workers before any exit hook.
function emptyCliConfigFile(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : "user";
  const file = path.join(os.tmpdir(), `tf-harness-empty-${uid}.tfrc`);
  if (!existsSync(file) || statSync(file).size !== 0) writeFileSync(file, "");
  return file;
}

/** Variables the harness always sets for Terraform (on top of the caller's environment). */
function harnessEnv(): NodeJS.ProcessEnv {
  return { TF_IN_AUTOMATION: "1", TF_CLI_CONFIG_FILE: emptyCliConfigFile(), CHECKPOINT_DISABLE: "1" };
}

// ---------------------------------------------------------------------------------------------
// Is terraform there?

export type TerraformAvailability = { ok: true; version: string } | { ok: false; reason: string };

let availability: TerraformAvailability | undefined;

/** Runs `terraform version -json` once (cached) and reports the version or why it is unusable. */
export function terraformAvailable(): TerraformAvailability {
  if (availability) return availability;
  const res = spawnSync(terraformBinary(), ["version", "-json"], {
    env: { ...process.env, ...harnessEnv() },
    encoding: "utf8",
    timeout: 30_000,
  });
  if (res.error) {
    const code = (res.error as NodeJS.ErrnoException).code;
    availability = {
      ok: false,
      reason: code === "ENOENT" ? `${terraformBinary()} not found on PATH` : `${terraformBinary()} version failed: ${res.error.message}`,
    };
  } else if (res.status !== 0) {
    availability = { ok: false, reason: `${terraformBinary()} version -json exited with ${res.status}: ${res.stderr.trim()}` };
  } else {
    try {
      const version = (JSON.parse(res.stdout) as { terraform_version?: string }).terraform_version;
      availability = version ? { ok: true, version } : { ok: false, reason: "terraform version -json printed no terraform_version" };
    } catch {
      availability = { ok: false, reason: `unexpected output of terraform version -json: ${res.stdout.slice(0, 200)}` };
    }
  }
  return availability;
}

const TERRAFORM_NEED: SuiteNeed = {
  what: "terraform",
  requiredEnv: "TERRAFORM_TESTS_REQUIRED",
  markerEnv: "TERRAFORM_TESTS_MARKER",
  available: terraformAvailable,
};

/** `describe` for suites that need terraform (see describeNeeding). */
export function describeWithTerraform(name: string, fn: () => void): void {
  describeNeeding(TERRAFORM_NEED, name, fn);
}

// ---------------------------------------------------------------------------------------------
// Provider doubles

/**
 * Bundles tools/provider-doubles if build/tools/provider-doubles.js is missing or older than
 * its sources, with the same esbuild options as scripts/build.mjs but for this entry only (so
 * a broken entry elsewhere cannot block these tests). Written to a temp file and renamed, so
 * parallel Jest workers never see half a file.
 */
export function ensureProviderDoublesBuilt(): string {
  const root = repoRoot();
  const bundle = path.join(root, PROVIDER_DOUBLES_BUNDLE);
  const srcDir = path.join(root, path.dirname(PROVIDER_DOUBLES_ENTRY));
  const newestSource = Math.max(
    ...readdirSync(srcDir)
      .filter((f) => f.endsWith(".ts"))
      .map((f) => statSync(path.join(srcDir, f)).mtimeMs),
  );
  if (existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource) return bundle;
  mkdirSync(path.dirname(bundle), { recursive: true });
  const tmp = `${bundle}.${process.pid}.tmp`;
  // esbuild's JS API in a child process: Jest's module sandbox and esbuild's worker service
  // do not mix well, and node_modules/.bin/esbuild may be a native binary or a JS shim.
  // The options are scripts/build.mjs's own, from the file both use.
  const script =
    `const { toolBundleOptions } = require(${JSON.stringify(path.join(root, "scripts", "tool-bundle-options.cjs"))});` +
    `require("esbuild").buildSync(toolBundleOptions(${JSON.stringify(path.join(root, PROVIDER_DOUBLES_ENTRY))}, ${JSON.stringify(tmp)}));`;
  const res = spawnSync(process.execPath, ["-e", script], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000,
  });
  if (res.status !== 0) {
    rmSync(tmp, { force: true });
    throw new Error(`bundling ${PROVIDER_DOUBLES_ENTRY} failed (${res.error?.message ?? `exit ${res.status}`}):\n${res.stderr}`);
  }
  renameSync(tmp, bundle);
  return bundle;
}

export interface ProviderDoubles {
  /**
   * The TF_REATTACH_PROVIDERS value (JSON) for hashicorp/null and hashicorp/external whose
   * external programs run in the doubles' own cwd and environment (see startProviderDoubles).
   */
  reattach: string;
  pid: number;
  /**
   * A TF_REATTACH_PROVIDERS value for one Terraform working directory: its external programs
   * run in `cwd` with `env`, like a provider started by Terraform there. TerraformRunner asks
   * for one per directory when given `doubles`.
   */
  session(opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string>;
  /** Stops the process (closing its stdin, then SIGTERM, then SIGKILL) and waits for it. */
  stop(): Promise<void>;
}

export interface StartProviderDoublesOptions {
  /**
   * Environment of the doubles process. The external double runs programs with it (for the
   * first reattach value), so give it the environment Terraform gets.
   */
  env?: NodeJS.ProcessEnv;
  /** Working directory (where programs of the first reattach value run). Default: process.cwd(). */
  cwd?: string;
  /** Log every RPC to stderr (PROVIDER_DOUBLES_DEBUG=1). */
  debug?: boolean;
  timeoutMs?: number;
}

/** Starts build/tools/provider-doubles.js and waits for its reattach line. */
export async function startProviderDoubles(opts: StartProviderDoublesOptions = {}): Promise<ProviderDoubles> {
  const bundle = path.join(repoRoot(), PROVIDER_DOUBLES_BUNDLE);
  if (!existsSync(bundle)) {
    throw new Error(`${PROVIDER_DOUBLES_BUNDLE} is missing: run \`npm run build\` (or call ensureProviderDoublesBuilt()) first`);
  }
  const env = { ...(opts.env ?? process.env) };
  if (opts.debug) env.PROVIDER_DOUBLES_DEBUG = "1";
  const timeoutMs = opts.timeoutMs ?? 20_000;
  // stdin stays an open pipe: the doubles exit when it closes, i.e. when we do. It also
  // carries session requests, answered one stdout line each, in order.
  const child = spawn(process.execPath, [bundle], { env, cwd: opts.cwd, stdio: ["pipe", "pipe", "inherit"] });

  // Line reader: each stdout line goes to the oldest waiter.
  type Waiter = { resolve: (line: string) => void; reject: (e: Error) => void };
  const waiting: Waiter[] = [];
  let gone: Error | undefined; // set once the process has exited or could not start
  const failAll = (e: Error): void => {
    gone ??= e;
    for (const w of waiting.splice(0)) w.reject(e);
  };
  let buf = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buf += chunk.toString("utf8");
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) waiting.shift()?.resolve(line);
    }
  });
  const nextLine = (what: string): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      if (gone) return reject(gone);
      const waiter: Waiter = {
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        // Drop this waiter so that a late line cannot be taken for the next answer.
        const i = waiting.indexOf(waiter);
        if (i >= 0) waiting.splice(i, 1);
        reject(new Error(`provider doubles sent no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      waiting.push(waiter);
    });

  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      failAll(new Error(`provider doubles exited (code ${code}, signal ${signal}); see stderr above`));
      resolve();
    }),
  );
  child.once("error", (e) => failAll(e));

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null || gone) return;
    child.stdin?.end();
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(killer);
  };

  // A reattach map, or {"error": "..."} for a refused session request.
  const checkReattach = (line: string, what: string): string => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`provider doubles sent an unexpected ${what}: ${line}`);
    }
    const error = (parsed as { error?: unknown }).error;
    if (typeof error === "string") throw new Error(`provider doubles refused the ${what}: ${error}`);
    return line;
  };

  const session = async (s: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string> => {
    const answer = nextLine("session");
    child.stdin?.write(`${JSON.stringify({ cwd: path.resolve(s.cwd), env: s.env })}\n`);
    return checkReattach(await answer, "session");
  };

  try {
    const reattach = checkReattach(await nextLine("reattach line"), "reattach line");
    return { reattach, pid: child.pid!, session, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Terraform commands

export interface CommandResult {
  args: string[];
  /** null when killed by a signal (e.g. the timeout). */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

export class TerraformCommandError extends Error {
  constructor(readonly result: CommandResult) {
    super(
      `terraform ${result.args.join(" ")} ${result.timedOut ? "timed out" : `exited with ${result.exitCode ?? result.signal}`}\n` +
        `--- stderr ---\n${result.stderr}\n--- stdout ---\n${result.stdout}`,
    );
    this.name = "TerraformCommandError";
  }
}

export interface RunOptions {
  /** Default: the runner's timeout (60 s unless configured). */
  timeoutMs?: number;
  /** Throw TerraformCommandError unless the exit code is acceptable (0; 0 or 2 for detailed plans). */
  check?: boolean;
  /** Extra arguments appended to the command's own. */
  args?: string[];
}

export interface PlanOptions extends RunOptions {
  detailedExitCode?: boolean;
  /** Plan file to write. Default: a fresh file under <dir>/.terraform/. */
  out?: string;
  destroy?: boolean;
}

export interface PlanResult extends CommandResult {
  planFile: string;
  /** `terraform show -json <planFile>`, when the plan succeeded. */
  plan?: PlanJson;
}

export interface TerraformRunnerOptions {
  /**
   * Provider doubles to use: the runner opens a session for its directory and environment
   * (so external programs see the same cwd and environment as under a real provider).
   */
  doubles?: ProviderDoubles;
  /** A fixed TF_REATTACH_PROVIDERS value instead (e.g. ProviderDoubles.reattach). */
  reattach?: string;
  /** Base environment (default process.env); the harness variables are added on top. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /**
   * Run terraform as pid 1 of a new pid namespace (`unshare -pf --mount-proc`), as a container
   * started with terraform as its command runs it. See {@link pid1Available}.
   */
  asPid1?: boolean;
}

/**
 * The hand-offs a stack folder holds (`.gpucloud-handoff/<key>.<workspace hash>.json`): not the
 * applied records, locks, or the run's sealed session and walk beside them.
 */
export function handoffFiles(stackDir: string): string[] {
  const dir = path.join(stackDir, ".gpucloud-handoff");
  return existsSync(dir) ? readdirSync(dir).filter((f) => /^[A-Za-z0-9_-]+\.[0-9a-f]{16}\.json$/.test(f)) : [];
}

/**
 * Whether terraform can be run as pid 1 here (`unshare -pf --mount-proc`, which needs root or a
 * user namespace); the reason when not.
 */
export function pid1Available(): { ok: true } | { ok: false; reason: string } {
  const probe = spawnSync("unshare", ["-pf", "--mount-proc", "sh", "-c", "test $$ -eq 1"], {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10_000,
  });
  if (probe.error) return { ok: false, reason: `unshare cannot be run: ${probe.error.message}` };
  if (probe.status !== 0)
    return { ok: false, reason: `unshare -pf --mount-proc failed: ${probe.stderr.toString().trim() || `exit ${probe.status}`}` };
  return { ok: true };
}

/**
 * The reattach value as terraform sees it from inside a new pid namespace: the doubles' process
 * is not visible there, and go-plugin gives up on a reattached provider whose pid it cannot
 * signal, so each entry names pid 1, terraform itself, which lives as long as the run.
 */
function reattachForPid1(reattach: string): string {
  const providers = JSON.parse(reattach) as Record<string, { Pid: number }>;
  for (const provider of Object.values(providers)) provider.Pid = 1;
  return JSON.stringify(providers);
}

// Subcommands that accept -input=false (output/show/version reject it).
const INPUT_COMMANDS = new Set(["init", "plan", "apply", "destroy", "import", "refresh", "taint", "untaint", "console"]);

/**
 * Runs terraform in one directory (a synthesized stack folder with cdk.tf.json, or any folder
 * with *.tf / *.tf.json). Commands never prompt (-input=false), never colour (-no-color), and
 * resolve with their output whatever the exit code unless `check` is set.
 */
export class TerraformRunner {
  /** Terraform's environment (without TF_REATTACH_PROVIDERS when it comes from a session). */
  readonly env: NodeJS.ProcessEnv;
  readonly dir: string;
  private readonly timeoutMs: number;
  private readonly doubles?: ProviderDoubles;
  private reattach?: Promise<string>;
  private planCounter = 0;
  private readonly asPid1: boolean;

  constructor(dir: string, opts: TerraformRunnerOptions = {}) {
    this.dir = path.resolve(dir);
    this.env = { ...(opts.env ?? process.env), ...harnessEnv() };
    if (opts.reattach) this.env.TF_REATTACH_PROVIDERS = opts.reattach;
    this.doubles = opts.doubles;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.asPid1 = opts.asPid1 ?? false;
  }

  /** The TF_REATTACH_PROVIDERS value used (opening the doubles session on first use). */
  reattachProviders(): Promise<string | undefined> {
    if (!this.doubles) return Promise.resolve(this.env.TF_REATTACH_PROVIDERS);
    this.reattach ??= this.doubles.session({ cwd: this.dir, env: this.env });
    return this.reattach;
  }

  /**
   * `terraform workspace new <name>`, which also selects it (run() would put -no-color before the
   * sub-subcommand, which terraform refuses); throws unless it succeeds without a word on stderr.
   */
  newWorkspace(name: string): void {
    const res = spawnSync(terraformBinary(), ["workspace", "new", "-no-color", name], { cwd: this.dir, env: this.env, encoding: "utf8" });
    if (res.status !== 0 || res.stderr !== "") throw new Error(`terraform workspace new ${name} failed: ${res.stderr}${res.stdout}`);
  }

  /** Starts `terraform <subcommand> ...` without waiting (for tests that interrupt it). */
  async start(
    subcommand: string,
    args: string[] = [],
    opts: { timeoutMs?: number } = {},
  ): Promise<{ child: ChildProcess; result: Promise<CommandResult> }> {
    const fullArgs = [subcommand, ...(INPUT_COMMANDS.has(subcommand) ? ["-input=false"] : []), "-no-color", ...args];
    const reattach = await this.reattachProviders();
    const env = reattach ? { ...this.env, TF_REATTACH_PROVIDERS: this.asPid1 ? reattachForPid1(reattach) : reattach } : this.env;
    const started = Date.now();
    const [command, commandArgs] = this.asPid1
      ? ["unshare", ["-pf", "--mount-proc", terraformBinary(), ...fullArgs]]
      : [terraformBinary(), fullArgs];
    const child = spawn(command, commandArgs, { cwd: this.dir, env, stdio: ["ignore", "pipe", "pipe"] });
    const result = new Promise<CommandResult>((resolve) => {
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let timedOut = false;
      const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
      }, timeoutMs);
      child.stdout?.on("data", (b: Buffer) => out.push(b));
      child.stderr?.on("data", (b: Buffer) => err.push(b));
      const done = (exitCode: number | null, signal: NodeJS.Signals | null, extraErr = ""): void => {
        clearTimeout(timer);
        resolve({
          args: fullArgs,
          exitCode,
          signal,
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8") + extraErr,
          timedOut,
          durationMs: Date.now() - started,
        });
      };
      child.once("error", (e) => done(null, null, `\n[harness] could not run ${terraformBinary()}: ${e.message}`));
      child.once("close", (code, signal) => done(code, signal));
    });
    return { child, result };
  }

  /** Runs `terraform <subcommand> ...`. */
  async run(subcommand: string, args: string[] = [], opts: RunOptions & { okExitCodes?: number[] } = {}): Promise<CommandResult> {
    const res = await (await this.start(subcommand, [...args, ...(opts.args ?? [])], opts)).result;
    if (opts.check && (res.exitCode === null || !(opts.okExitCodes ?? [0]).includes(res.exitCode))) throw new TerraformCommandError(res);
    return res;
  }

  init(opts: RunOptions = {}): Promise<CommandResult> {
    return this.run("init", [], opts);
  }

  /** `terraform plan -out=<file>`, then `terraform show -json <file>` when it succeeded. */
  async plan(opts: PlanOptions = {}): Promise<PlanResult> {
    let planFile = opts.out;
    if (!planFile) {
      const dir = path.join(this.dir, ".terraform");
      mkdirSync(dir, { recursive: true });
      planFile = path.join(dir, `harness-${process.pid}-${++this.planCounter}.tfplan`);
    }
    const args = [`-out=${planFile}`];
    if (opts.detailedExitCode) args.push("-detailed-exitcode");
    if (opts.destroy) args.push("-destroy");
    const res = await this.run("plan", args, { ...opts, okExitCodes: opts.detailedExitCode ? [0, 2] : [0] });
    const succeeded = res.exitCode === 0 || (opts.detailedExitCode === true && res.exitCode === 2);
    if (!succeeded) return { ...res, planFile };
    return { ...res, planFile, plan: await this.showJson<PlanJson>([planFile]) };
  }

  /** `terraform apply`: of a saved plan file if given, otherwise with -auto-approve. */
  apply(opts: RunOptions & { planFile?: string } = {}): Promise<CommandResult> {
    return this.run("apply", opts.planFile ? [opts.planFile] : ["-auto-approve"], opts);
  }

  destroy(opts: RunOptions = {}): Promise<CommandResult> {
    return this.run("destroy", ["-auto-approve"], opts);
  }

  /** Parsed `terraform output -json` (throws if the command fails). */
  async output(): Promise<Record<string, OutputJson>> {
    const res = await this.run("output", ["-json"], { check: true });
    return JSON.parse(res.stdout) as Record<string, OutputJson>;
  }

  /** Parsed `terraform show -json` of the current state (throws if the command fails). */
  show(): Promise<StateJson> {
    return this.showJson<StateJson>([]);
  }

  private async showJson<T>(args: string[]): Promise<T> {
    const res = await this.run("show", ["-json", ...args], { check: true });
    return JSON.parse(res.stdout) as T;
  }
}

// ---------------------------------------------------------------------------------------------
// Plan / state JSON (only what tests look at; see Terraform's "JSON Output Format")

export interface ChangeJson {
  actions: string[];
  before: unknown;
  after: unknown;
  after_unknown?: unknown;
  before_sensitive?: unknown;
  after_sensitive?: unknown;
  replace_paths?: (string | number)[][];
}

export interface ResourceChangeJson {
  address: string;
  mode: "managed" | "data";
  type: string;
  name: string;
  provider_name: string;
  change: ChangeJson;
  action_reason?: string;
}

export interface PlanJson {
  format_version: string;
  terraform_version: string;
  resource_changes?: ResourceChangeJson[];
  output_changes?: Record<string, ChangeJson>;
  planned_values?: unknown;
  prior_state?: StateJson;
  errored?: boolean;
  [key: string]: unknown;
}

export interface StateResourceJson {
  address: string;
  mode: "managed" | "data";
  type: string;
  name: string;
  values: Record<string, unknown>;
  [key: string]: unknown;
}

export interface StateJson {
  format_version?: string;
  values?: {
    outputs?: Record<string, OutputJson>;
    root_module?: { resources?: StateResourceJson[]; child_modules?: unknown[] };
  };
  [key: string]: unknown;
}

export interface OutputJson {
  value: unknown;
  type: unknown;
  sensitive: boolean;
}

/** Resource address → planned actions, e.g. { "null_resource.x": ["delete", "create"] }. */
export function resourceActions(plan: PlanJson): Record<string, string[]> {
  return Object.fromEntries((plan.resource_changes ?? []).map((rc) => [rc.address, rc.change.actions]));
}

/** Output name → its planned change (actions, before, after, after_unknown). */
export function outputChanges(plan: PlanJson): Record<string, ChangeJson> {
  return { ...(plan.output_changes ?? {}) };
}

/** Resources in a `terraform show -json` state, by address. */
export function stateResources(state: StateJson): Record<string, StateResourceJson> {
  return Object.fromEntries((state.values?.root_module?.resources ?? []).map((r) => [r.address, r]));
}

// ---------------------------------------------------------------------------------------------
// Small helpers for hand-written configurations

/**
 * Collapses all whitespace runs to one space. Terraform wraps diagnostics at ~78 columns even
 * with -no-color, so compare long messages with oneLine(res.stderr).
 */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ");
}

const tempDirs = new Set<string>();

/** A fresh temp directory, removed by removeTempDirs(). */
export function makeTempDir(prefix = "tf-test-"): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** Removes the directories made by makeTempDir (call from afterAll); KEEP_TF_TEST_DIRS=1 keeps them for a post-mortem. */
export function removeTempDirs(): void {
  if (process.env.KEEP_TF_TEST_DIRS === "1") {
    if (tempDirs.size > 0) console.warn(`Keeping test directories:\n${[...tempDirs].join("\n")}`);
    return;
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Writes `main.tf.json` (and optional extra files) into `dir`; returns `dir`. */
export function writeTerraformJson(dir: string, config: object, files: Record<string, string> = {}): string {
  writeFileSync(path.join(dir, "main.tf.json"), `${JSON.stringify(config, null, 2)}\n`);
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
}
