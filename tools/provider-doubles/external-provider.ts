// Double of hashicorp/external, modelled on v2.3.3–2.3.5 (terraform-plugin-framework based,
// stderr always traced): internal/provider/data_source.go in hashicorp/terraform-provider-external.
//
// Behaviour matched from that source:
// - program elements that are null or "" are dropped; none left → "External Program Missing";
// - query elements with null values are dropped; the query is written to stdin as JSON
//   (Go's json.Marshal of a map: keys sorted, <, > and & escaped);
// - program[0] is resolved with exec.LookPath (the ErrDot case is tolerated); when it is not
//   found on PATH and $SHELL names a known shell, the whole program is run through
//   `$SHELL -i -c -- "<program joined by spaces>"`, as the real provider does;
// - cmd.Dir = working_dir ("" means the provider's own cwd, which is Terraform's); the
//   environment is inherited from Terraform. A double serves many Terraform runs, so both
//   come from its ExternalContext (see main.ts sessions) instead of process.cwd()/process.env;
// - errors carry the real summaries and details ("External Program Lookup Failed",
//   "External Program Execution Failed", "Unexpected External Program Results"), attached
//   to the `program` attribute; "Program:" shows cmd.Path (the resolved path);
// - output is decoded like json.Unmarshal into map[string]string (JSON null gives an empty map);
// - on success result = that map and id = "-";
// - the program is killed (SIGKILL, like exec.CommandContext) when the call is cancelled.
// Go's error strings (exit status, lookup and JSON errors) are reproduced approximately.
import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import { CtyObject, CtyValue, isObject, isUnknown } from "./cty";
import { attrPath, BlockSpec, Diagnostic, errorDiag } from "./protocol";
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
    { name: "id", type: "string", computed: true, description: "Always \"-\"." },
  ],
};

// Shells whose -i/-c behave as the real provider expects for its fallback.
const FALLBACK_SHELLS = ["bash", "fish", "zsh", "ksh", "ash", "sh", "dash"];

/** Go's %q for the strings we print (JSON quoting is the same for ordinary text). */
const goQuote = (s: string): string => JSON.stringify(s);

/** types.String's String(): quoted, or <null>. */
const frameworkString = (v: CtyValue | undefined): string => (typeof v === "string" ? goQuote(v) : v === null || v === undefined ? "<null>" : "<unknown>");

function checkExecutable(file: string, cwd: string): string | undefined {
  // Go's findExecutable: stat, reject directories, require an execute bit (Eaccess X_OK).
  const abs = path.resolve(cwd, file);
  let st;
  try {
    st = statSync(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return `stat ${file}: ${code === "ENOENT" ? "no such file or directory" : code === "ENOTDIR" ? "not a directory" : String(code)}`;
  }
  if (st.isDirectory()) return "is a directory";
  try {
    accessSync(abs, constants.X_OK);
  } catch {
    return "permission denied";
  }
  return undefined;
}

export type LookPathResult = { ok: true; path: string } | { ok: false; notFound: boolean; error: string };

/**
 * exec.LookPath on Unix, with the ErrDot result treated as success (as the provider does).
 * Relative names and PATH entries are checked against `cwd` (the provider's working directory).
 */
export function lookPath(file: string, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): LookPathResult {
  if (file.includes("/")) {
    const err = checkExecutable(file, cwd);
    return err ? { ok: false, notFound: false, error: `exec: ${goQuote(file)}: ${err}` } : { ok: true, path: file };
  }
  for (let dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") dir = ".";
    const candidate = path.join(dir, file);
    if (checkExecutable(candidate, cwd) === undefined) return { ok: true, path: candidate };
  }
  return { ok: false, notFound: true, error: `exec: ${goQuote(file)}: executable file not found in $PATH` };
}

/** Go's json.Marshal for map[string]string: sorted keys, HTML-safe escaping. */
export function goJsonMarshalStringMap(m: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.keys(m).sort().map((k) => [k, m[k]]));
  return JSON.stringify(sorted).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * json.Unmarshal(output, &map[string]string{}): returns the map or Go's error text.
 * Go reports the first mismatching value; wording follows encoding/json closely.
 */
export function parseProgramOutput(stdout: string): { ok: true; result: Record<string, string> } | { ok: false; error: string } {
  if (stdout.trim() === "") return { ok: false, error: "unexpected end of JSON input" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch (e) {
    return { ok: false, error: `invalid JSON: ${(e as Error).message}` };
  }
  if (parsed === null) return { ok: true, result: {} };
  const kind = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "boolean" ? "bool" : typeof v);
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    return { ok: false, error: `json: cannot unmarshal ${kind(parsed)} into Go value of type map[string]string` };
  }
  const result: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof v === "string") result[k] = v;
    // Go leaves a JSON null element as the zero value "" without error.
    else if (v === null) result[k] = "";
    else return { ok: false, error: `json: cannot unmarshal ${kind(v)} into Go struct field .${k} of type string` };
  }
  return { ok: true, result };
}

interface RunOutcome {
  stdout: string;
  stderr: string;
  /** Go's error text for a failed run ("exit status 1", "signal: killed", ...), else undefined. */
  error?: string;
}

function runProgram(file: string, argv0: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, stdin: string, ctx: CallContext): Promise<RunOutcome> {
  return new Promise((resolve) => {
    if (ctx.signal.aborted) return resolve({ stdout: "", stderr: "", error: "context canceled" });
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
      resolve({ stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), ...outcome });
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
    child.on("error", (e: NodeJS.ErrnoException) => finish({ error: `fork/exec ${file}: ${e.code === "EACCES" ? "permission denied" : e.message}` }));
    // After a kill, do not wait for grandchildren that may still hold the pipes open.
    child.on("exit", () => {
      if (ctx.signal.aborted) finish({ error: "context canceled" });
    });
    child.on("close", (code, signal) => {
      if (ctx.signal.aborted) return finish({ error: "context canceled" });
      if (signal) return finish({ error: `signal: ${signalName(signal)}` });
      finish(code === 0 ? {} : { error: `exit status ${code}` });
    });
  });
}

function signalName(sig: NodeJS.Signals): string {
  const names: Partial<Record<NodeJS.Signals, string>> = { SIGKILL: "killed", SIGTERM: "terminated", SIGINT: "interrupt", SIGSEGV: "segmentation fault", SIGABRT: "aborted" };
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

async function readExternal(config: CtyValue, ctx: CallContext, run: ExternalContext): Promise<{ state: CtyValue; diagnostics: Diagnostic[] }> {
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

  const found = lookPath(filtered[0], run.env, run.cwd);
  let cmdPath: string; // what Go would put in cmd.Path
  let args: string[];
  let argv0 = filtered[0];
  if (found.ok) {
    cmdPath = found.path;
    args = filtered.slice(1);
  } else {
    const shell = run.env.SHELL ?? "";
    const usable = found.notFound && process.platform !== "win32" && FALLBACK_SHELLS.some((s) => shell.endsWith(`/${s}`));
    if (!usable) {
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
    cmdPath = shell;
    argv0 = shell;
    args = ["-i", "-c", "--", filtered.join(" ")];
  }

  const workingDir = typeof config.working_dir === "string" && config.working_dir !== "" ? config.working_dir : undefined;
  let outcome: RunOutcome;
  // A relative working_dir is relative to the provider's cwd (Terraform's), as with os.StartProcess.
  const childCwd = workingDir === undefined ? run.cwd : path.resolve(run.cwd, workingDir);
  const dirProblem = checkDir(childCwd);
  if (dirProblem !== undefined) {
    outcome = { stdout: "", stderr: "", error: `chdir ${workingDir ?? run.cwd}: ${dirProblem}` };
  } else {
    // A path found through a relative PATH entry ("." or "bin") is relative to the provider's
    // cwd, while the child starts in working_dir: resolve it before spawning. A relative path
    // given with a slash stays relative to the child's directory, as Go's Cmd.Path is.
    const exe = found.ok && !filtered[0].includes("/") ? path.resolve(run.cwd, cmdPath) : cmdPath;
    ctx.log(`external: running ${JSON.stringify([cmdPath, ...args])} in ${childCwd} with query ${queryJson}`);
    outcome = await runProgram(exe, argv0, args, childCwd, run.env, queryJson, ctx);
    ctx.log(`external: ${cmdPath} finished (${outcome.error ?? "ok"}) stdout=${JSON.stringify(outcome.stdout)} stderr=${JSON.stringify(outcome.stderr)}`);
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

  const parsed = parseProgramOutput(outcome.stdout);
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

function checkDir(dir: string): string | undefined {
  try {
    return statSync(dir).isDirectory() ? undefined : "not a directory";
  } catch {
    return "no such file or directory";
  }
}

const externalDataSource = (run: ExternalContext): DataSourceDouble => ({
  schema: externalSchema,
  // The real schema has listvalidator.SizeAtLeast(1) on program.
  validate: (config) => {
    if (!isObject(config) || !Array.isArray(config.program) || isUnknown(config.program)) return [];
    if (config.program.length >= 1) return [];
    return [
      errorDiag("Invalid Attribute Value", `Attribute program list must contain at least 1 elements, got: ${config.program.length}`, attrPath("program")),
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
