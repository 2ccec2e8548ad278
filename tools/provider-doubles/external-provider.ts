// Double of hashicorp/external v2.3.5 (internal/provider/data_source.go is identical in v2.3.3,
// v2.3.4 and v2.3.5; v2.4.0 only changes its copyright line), built with Go 1.23 and
// terraform-plugin-framework v1.14. Compared with that source behaviour by behaviour:
// - program elements that are null or "" are dropped (arguments too); none left →
//   "External Program Missing"; an empty list fails validation (listvalidator.SizeAtLeast(1));
// - query elements with null values are dropped; the query is written to stdin as JSON
//   (Go's json.Marshal of a map: keys sorted, <, > and & escaped); no query → "{}";
// - program[0] is resolved with exec.LookPath on the PATH of the provider process (ErrDot
//   tolerated). There is NO shell and no fallback: a program not found fails with "External
//   Program Lookup Failed". A name with a slash ("./x") is checked relative to Terraform's
//   directory, but Go runs a relative path relative to working_dir (exec.Cmd.Path: "If Path is
//   relative, it is evaluated relative to Dir"), and so does this double;
// - cmd.Dir = working_dir ("" or null means the provider's cwd, which is Terraform's);
// - the environment is Terraform's plus what go-plugin adds when Terraform starts a provider
//   (see providerProcessEnv). A double serves many Terraform runs, so cwd and environment
//   come from its ExternalContext (see main.ts sessions) instead of process.cwd()/process.env;
// - errors carry the real summaries and details ("External Program Lookup Failed",
//   "External Program Execution Failed", "Unexpected External Program Results"), attached to
//   the `program` attribute; "Program:" shows cmd.Path; stderr is reported only on failure;
// - output is decoded like json.Unmarshal into map[string]string (go-json.ts), with Go's error
//   texts; a JSON null gives a null `result`; on success id = "-";
// - the program is killed (SIGKILL, like exec.CommandContext) when the call is cancelled, and
//   the error is the process's own ("signal: killed"), as cmd.Wait prefers it.
// Known differences, all outside what the project's programs do: PLUGIN_CLIENT_CERT is not in
// the environment; "(core dumped)" is never appended to a signal.
import { spawn } from "node:child_process";
import path from "node:path";

import { type CtyObject, type CtyValue, isObject, isUnknown } from "./cty";
import { goErrnoText, goQuote, lookPath, startProcessDirError } from "./go-exec";
import { goJsonMarshalStringMap, goJsonUnmarshalStringMap } from "./go-json";
import { attrPath, type BlockSpec, type Diagnostic, errorDiag } from "./protocol";
import type { CallContext, DataSourceDouble, ProviderDouble } from "./server";

export const EXTERNAL_PROVIDER_ADDRESS = "registry.terraform.io/hashicorp/external";

const externalSchema: BlockSpec = {
  description: "Runs a program that answers a JSON object of strings (provider double).",
  attributes: [
    {
      name: "program",
      type: ["list", "string"],
      required: true,
      description: "Program and its arguments; run directly (no shell), looked up on PATH.",
    },
    { name: "working_dir", type: "string", optional: true, description: "Working directory of the program." },
    { name: "query", type: ["map", "string"], optional: true, description: "Strings written to the program's stdin as a JSON object." },
    { name: "result", type: ["map", "string"], computed: true, description: "Strings printed by the program as a JSON object." },
    { name: "id", type: "string", computed: true, description: 'Always "-".' },
  ],
};

/** types.String's String(): quoted, or <null>. */
const frameworkString = (v: CtyValue | undefined): string =>
  typeof v === "string" ? goQuote(v) : v === null || v === undefined ? "<null>" : "<unknown>";

export interface RunOutcome {
  stdout: Buffer;
  stderr: string;
  /** Go's error text for a failed run ("exit status 1", "signal: killed", ...), else undefined. */
  error?: string;
  /** ProcessState.ExitCode(): the code, -1 after a signal; undefined when the process never ran. */
  exitCode?: number;
  /** The error is an *exec.ExitError (the process ran and failed), not a failure to start it. */
  exitError?: boolean;
}

/**
 * Runs `file` (a path with a slash, so that nothing searches PATH again) like cmd.Output():
 * `cmdPath` is what Go would call it in error texts.
 */
export function runProgram(
  file: string,
  cmdPath: string,
  argv0: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  stdin: string,
  ctx: CallContext,
): Promise<RunOutcome> {
  return new Promise((resolve) => {
    if (ctx.signal.aborted) return resolve({ stdout: Buffer.alloc(0), stderr: "", error: "context canceled" });
    const child = spawn(file, args, {
      argv0,
      cwd,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let settled = false;
    const finish = (outcome: Omit<RunOutcome, "stdout" | "stderr">): void => {
      if (settled) return;
      settled = true;
      ctx.signal.removeEventListener("abort", onAbort);
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8"), ...outcome });
    };
    const onAbort = (): void => {
      ctx.log(`external: killing ${file} (pid ${child.pid}): call cancelled`);
      child.kill("SIGKILL");
    };
    ctx.signal.addEventListener("abort", onAbort);
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    // The program may exit without reading stdin; that is not an error.
    child.stdin.on("error", () => undefined);
    child.stdin.end(stdin);
    child.on("error", (e) => finish({ error: `fork/exec ${cmdPath}: ${goErrnoText(e)}` }));
    // cmd.Wait prefers the process's own failure ("signal: killed" after the kill) over the
    // context's error, which it reports only for a program that still exited 0.
    const outcomeOf = (code: number | null, signal: NodeJS.Signals | null): Omit<RunOutcome, "stdout" | "stderr"> => {
      if (signal) return { error: `signal: ${signalName(signal)}`, exitCode: -1, exitError: true };
      if (code !== 0) return { error: `exit status ${code}`, exitCode: code ?? -1, exitError: true };
      return ctx.signal.aborted ? { error: "context canceled", exitCode: 0 } : { exitCode: 0 };
    };
    // Like cmd.Wait with WaitDelay 0, also after a kill: the answer waits until every holder of
    // the pipes (grandchildren included) has closed them.
    child.on("close", (code, signal) => finish(outcomeOf(code, signal)));
  });
}

function signalName(sig: NodeJS.Signals): string {
  // syscall.Signal.String() on Linux.
  const names: Partial<Record<NodeJS.Signals, string>> = {
    SIGKILL: "killed",
    SIGTERM: "terminated",
    SIGINT: "interrupt",
    SIGHUP: "hangup",
    SIGQUIT: "quit",
    SIGPIPE: "broken pipe",
    SIGSEGV: "segmentation fault",
    SIGABRT: "aborted",
    SIGBUS: "bus error",
    SIGFPE: "floating point exception",
    SIGILL: "illegal instruction",
    SIGALRM: "alarm clock",
    SIGUSR1: "user defined signal 1",
    SIGUSR2: "user defined signal 2",
    SIGTRAP: "trace/breakpoint trap",
  };
  return names[sig] ?? sig;
}

function programMissing(): Diagnostic {
  return errorDiag(
    "External Program Missing",
    "The data source was configured without a program to execute. Verify the configuration contains at least one non-empty value.",
    attrPath("program"),
  );
}

/** Where and with which environment programs run: Terraform's, for the real provider. */
export interface ExternalContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

// go-plugin's handshake values for a provider started by Terraform (Terraform's
// tfplugin.Handshake cookie, go-plugin's default port range, protocols 5 and 6).
const GO_PLUGIN_ENV: Record<string, string> = {
  TF_PLUGIN_MAGIC_COOKIE: "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
  PLUGIN_MIN_PORT: "10000",
  PLUGIN_MAX_PORT: "25000",
  PLUGIN_PROTOCOL_VERSIONS: "5,6",
};

/**
 * The provider process's environment, which programs inherit: go-plugin's client starts a
 * provider with os.Environ() followed by its handshake variables (the later ones win). The
 * PLUGIN_CLIENT_CERT that Terraform's auto-mTLS also adds (a fresh public certificate per
 * provider process) is not reproduced.
 */
export function providerProcessEnv(terraformEnv: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...terraformEnv, ...GO_PLUGIN_ENV };
}

async function readExternal(
  config: CtyValue,
  ctx: CallContext,
  run: ExternalContext,
): Promise<{ state: CtyValue; diagnostics: Diagnostic[] }> {
  if (!isObject(config)) throw new Error("config of data.external is not an object");
  const fail = (d: Diagnostic) => ({ state: null, diagnostics: [d] });

  const program = Array.isArray(config.program) ? config.program : [];
  const filtered = program.filter((a): a is string => typeof a === "string" && a !== "");
  if (filtered.length === 0) return fail(programMissing());

  const query: Record<string, string> = {};
  if (isObject(config.query)) {
    for (const [k, v] of Object.entries(config.query)) if (typeof v === "string") query[k] = v;
  }
  const queryJson = goJsonMarshalStringMap(query);

  const env = providerProcessEnv(run.env);
  const found = lookPath(filtered[0], env, run.cwd);
  if (!found.ok) {
    return fail(
      errorDiag(
        "External Program Lookup Failed",
        // Verbatim wording of the real provider, including its duplicated first sentence.
        "The data source received an unexpected error while attempting to parse the query. " +
          `The data source received an unexpected error while attempting to find the program.

The program must be accessible according to the platform where Terraform is running.

If the expected program should be automatically found on the platform where Terraform is running, ensure that the program is in an expected directory. On Unix-based platforms, these directories are typically searched based on the '$PATH' environment variable. On Windows-based platforms, these directories are typically searched based on the '%PATH%' environment variable.

If the expected program is relative to the Terraform configuration, it is recommended that the program name includes the interpolated value of 'path.module' before the program name to ensure that it is compatible with varying module usage. For example: "\${path.module}/my-program"

The program must also be executable according to the platform where Terraform is running. On Unix-based platforms, the file on the filesystem must have the executable bit set. On Windows-based platforms, no action is typically necessary.
` +
          `\nPlatform: ${process.platform}` +
          `\nProgram: ${frameworkString(program[0])}` +
          `\nError: ${found.error}`,
        attrPath("program"),
      ),
    );
  }
  // What Go puts in cmd.Path: the name as given if it has a slash, else LookPath's answer
  // (relative when found through a relative PATH entry).
  const cmdPath = found.path;
  const args = filtered.slice(1);

  const workingDir = typeof config.working_dir === "string" ? config.working_dir : "";
  // cmd.Dir: a relative working_dir is relative to the provider's cwd (Terraform's).
  const childCwd = workingDir === "" ? run.cwd : path.resolve(run.cwd, workingDir);
  const dirError = workingDir === "" ? undefined : startProcessDirError(workingDir, childCwd, cmdPath);
  let outcome: RunOutcome;
  if (dirError !== undefined) {
    outcome = { stdout: Buffer.alloc(0), stderr: "", error: dirError };
  } else {
    // The child chdirs to cmd.Dir before exec, so a relative cmd.Path (./x, or bin/x found
    // through a relative PATH entry) names a file under working_dir, not under Terraform's cwd.
    const exe = path.resolve(childCwd, cmdPath);
    ctx.log(`external: running ${JSON.stringify([cmdPath, ...args])} in ${childCwd} with query ${queryJson}`);
    outcome = await runProgram(exe, cmdPath, filtered[0], args, childCwd, env, queryJson, ctx);
    // Lengths only: a program's output may carry secrets.
    ctx.log(
      `external: ${cmdPath} finished (${outcome.error ?? "ok"}), ${outcome.stdout.length} bytes on stdout, ${outcome.stderr.length} on stderr`,
    );
  }

  if (outcome.error !== undefined) {
    if (outcome.stderr.length > 0) {
      return fail(
        errorDiag(
          "External Program Execution Failed",
          "The data source received an unexpected error while attempting to execute the program." +
            `\n\nProgram: ${cmdPath}` +
            `\nError Message: ${outcome.stderr}` +
            `\nState: ${outcome.error}`,
          attrPath("program"),
        ),
      );
    }
    return fail(
      errorDiag(
        "External Program Execution Failed",
        "The data source received an unexpected error while attempting to execute the program.\n\n" +
          "The program was executed, however it returned no additional error messaging." +
          `\n\nProgram: ${cmdPath}` +
          `\nState: ${outcome.error}`,
        attrPath("program"),
      ),
    );
  }

  const parsed = goJsonUnmarshalStringMap(outcome.stdout);
  if (!parsed.ok) {
    return fail(
      errorDiag(
        "Unexpected External Program Results",
        `The data source received unexpected results after executing the program.

Program output must be a JSON encoded map of string keys and string values.

If the error is unclear, the output can be viewed by enabling Terraform's logging at TRACE level. Terraform documentation on logging: https://www.terraform.io/internals/debugging
` +
          `\nProgram: ${cmdPath}` +
          `\nResult Error: ${parsed.error}`,
        attrPath("program"),
      ),
    );
  }

  const state: CtyObject = {
    program: config.program ?? null,
    working_dir: config.working_dir ?? null,
    query: config.query ?? null,
    result: parsed.result,
    id: "-",
  };
  return { state, diagnostics: [] };
}

const externalDataSource = (run: ExternalContext): DataSourceDouble => ({
  schema: externalSchema,
  // The real schema has listvalidator.SizeAtLeast(1) on program.
  validate: (config) => {
    if (!isObject(config) || !Array.isArray(config.program) || isUnknown(config.program)) return [];
    if (config.program.length >= 1) return [];
    return [
      errorDiag(
        "Invalid Attribute Value",
        `Attribute program list must contain at least 1 elements, got: ${config.program.length}`,
        attrPath("program"),
      ),
    ];
  },
  read: (config, ctx) => readExternal(config, ctx, run),
});

/** The external double; programs run in `run.cwd` with `run.env` (default: this process's). */
export function externalProvider(run: ExternalContext = { cwd: process.cwd(), env: process.env }): ProviderDouble {
  return {
    address: EXTERNAL_PROVIDER_ADDRESS,
    name: "external",
    providerSchema: { attributes: [] },
    resources: {},
    dataSources: { external: externalDataSource(run) },
  };
}
