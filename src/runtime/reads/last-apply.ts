import { spawn } from "node:child_process";

import { CDKTF_TERRAFORM_BINARY_ENV, CredentialEnv, decodeLedger, LEDGER_OUTPUT, type LedgerToken, tokenWriteKind } from "../../protocol";

/**
 * What the last apply of this stack managed, as its Terraform state keeps it (the ledger output,
 * LEDGER_OUTPUT): read by the plan-time read with `terraform output -json <ledger>`, which prints
 * that output alone (never another output, sensitive or not), run in the stack folder and workspace
 * by the binary that runs the plan, as far as it can be named (Terraform passes its own path to no
 * child). Every backend works this way (local, S3, GCS, azurerm, pg, HTTP, HCP Terraform in local
 * execution): the state is the one thing every pipeline keeps.
 */
export type LastApply =
  /**
   * `ledger` is undefined before any apply of a token (no state, or a state without the library's
   * writes), and after a full apply that ended before it wrote the ledger (`unfinished` says so).
   */
  | { readonly known: true; readonly ledger: ReadonlyMap<string, LedgerToken> | undefined; readonly unfinished?: string }
  | { readonly known: false; readonly reason: string };

/** Variables the plan's own command line and logging bring, which `output` refuses or would log the state with. */
const NOT_FOR_THE_CHILD = [
  "TF_CLI_ARGS",
  "TF_CLI_ARGS_output",
  "TF_CLI_ARGS_state",
  "TF_LOG",
  "TF_LOG_CORE",
  "TF_LOG_PROVIDER",
  "TF_LOG_PATH",
];

/** What a child may print before it is stopped: a ledger of 5,000 tokens is about 2 MiB. */
const MAX_OUTPUT_BYTES = 32 * 1024 * 1024;

/**
 * What `state list` says of a workspace that has no state yet (Terraform's and OpenTofu's
 * errStateNotFound): the one failure that means "nothing applied". Should the text ever change,
 * a first plan fails closed, naming the way on (see unknownLastApplyError).
 */
const NO_STATE = "No state file was found";

/** The variable that names the binary, if one does. */
function namingVariable(env: NodeJS.ProcessEnv): string | undefined {
  return [CredentialEnv.TERRAFORM, CDKTF_TERRAFORM_BINARY_ENV].find((name) => env[name]);
}

/** The binaries to try, in order: the one named, else terraform, else tofu (OpenTofu). */
function candidates(env: NodeJS.ProcessEnv): string[] {
  const variable = namingVariable(env);
  return variable !== undefined ? [env[variable]!] : ["terraform", "tofu"];
}

/**
 * The first line that says what went wrong, without what a URL in it may carry of a backend's
 * credentials (its user information, its query string).
 */
function firstError(stderr: string): string {
  const lines = stderr.split("\n").map((l) => l.replace(/^[│╷╵\s]+/, "").trim());
  const line = lines.find((l) => l.startsWith("Error")) ?? lines.find((l) => l !== "") ?? "";
  return line
    .replace(/\/\/[^/\s@]*@/g, "//")
    .replace(/\?[^\s"']*/g, "")
    .slice(0, 200);
}

/** How one run of the binary ended. */
type Ran =
  | { readonly missing: true }
  | { readonly missing: false; readonly ok: true; readonly stdout: string }
  | { readonly missing: false; readonly ok: false; readonly stderr: string; readonly why: string };

/**
 * Runs `binary args` in its own process group, so that a wrapper which does not exec the real
 * terraform is stopped with everything it started: SIGKILL to the group at `timeoutMs`, on
 * `signal`, past MAX_OUTPUT_BYTES, and once it has exited (a child left behind ends with it).
 * SIGKILL, since Terraform takes SIGTERM as a request to finish what it waits for.
 */
function runGrouped(
  binary: string,
  args: readonly string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; signal?: AbortSignal },
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let stopped: string | undefined;
    const stopGroup = (why?: string) => {
      stopped ??= why;
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone already (or no group on this platform): the child itself, if still there.
        if (why !== undefined) child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => stopGroup(`no answer within ${Math.ceil(opts.timeoutMs / 1000)} s`), opts.timeoutMs);
    const onAbort = () => stopGroup("stopped: the read ended");
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) return stopGroup(`printed more than ${MAX_OUTPUT_BYTES / 1024 / 1024} MiB`);
      into.push(chunk);
    };
    child.stdout.on("data", collect(out));
    child.stderr.on("data", collect(err));
    child.on("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      resolve(e.code === "ENOENT" ? { missing: true } : { missing: false, ok: false, stderr: "", why: e.message });
    });
    // A wrapper's children left behind end with it (they may hold its pipes open).
    child.on("exit", () => stopGroup());
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      const stderr = Buffer.concat(err).toString("utf8");
      if (stopped === undefined && code === 0) return resolve({ missing: false, ok: true, stdout: Buffer.concat(out).toString("utf8") });
      const why = stopped ?? (firstError(stderr) || (signal ? `killed by ${signal}` : `exit code ${String(code)}`));
      resolve({ missing: false, ok: false, stderr, why });
    });
  });
}

/**
 * `terraform output -json <ledger>` in `cwd` and `workspace`, within `timeoutMs`, or until `signal`
 * aborts it. Where that fails (no such output, or no state), `terraform state list` tells a
 * workspace that never applied a token (no state, or none of the library's writes in it: known, no
 * ledger) from one whose ledger is missing, as after a first apply with `-target` (not known).
 */
export async function readLastApply(
  env: NodeJS.ProcessEnv,
  cwd: string,
  workspace: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<LastApply> {
  const childEnv: NodeJS.ProcessEnv = { ...env, TF_WORKSPACE: workspace, TF_IN_AUTOMATION: "1", TF_INPUT: "0", CHECKPOINT_DISABLE: "1" };
  for (const name of NOT_FOR_THE_CHILD) delete childEnv[name];
  const deadline = Date.now() + timeoutMs;
  const run = (binary: string, args: string[]) =>
    runGrouped(binary, args, { cwd, env: childEnv, timeoutMs: Math.max(1, deadline - Date.now()), signal });
  for (const binary of candidates(env)) {
    const output = await run(binary, ["output", "-no-color", "-json", LEDGER_OUTPUT]);
    if (output.missing) continue;
    if (output.ok) return ledgerOf(output.stdout, binary);
    const failed = `\`${binary} output -json ${LEDGER_OUTPUT}\` failed: ${output.why}`;
    const list = await run(binary, ["state", "list", "-no-color"]);
    if (list.missing || (!list.ok && !list.stderr.includes(NO_STATE))) return { known: false, reason: failed };
    if (!list.ok) return { known: true, ledger: undefined };
    const addresses = list.stdout.split("\n").map((line) => line.trim());
    const held = addresses.filter((address) => tokenWriteKind(address) === "token");
    // A full apply creates the roster first: with it, the apply ended before its last step (a fault, a kill), which the next apply finishes.
    if (addresses.some((address) => tokenWriteKind(address) === "roster")) {
      return {
        known: true,
        ledger: undefined,
        unfinished:
          `an apply of this stack ended before it wrote ${LEDGER_OUTPUT} (its state holds the token roster and no ledger), ` +
          `so this plan cannot check the credentials against the account that apply wrote to; the next apply writes the ledger`,
      };
    }
    if (held.length === 0) return { known: true, ledger: undefined };
    return {
      known: false,
      reason:
        `the state holds this library's writes (${held.slice(0, 3).join(", ")}${held.length > 3 ? ", …" : ""}) but no ` +
        `${LEDGER_OUTPUT} output: an apply with -target writes no output that refers to what it left out`,
    };
  }
  const variable = namingVariable(env);
  return {
    known: false,
    reason:
      variable !== undefined
        ? `${variable} names "${env[variable]}", which cannot be found`
        : `no terraform or tofu on PATH (set ${CredentialEnv.TERRAFORM} to the binary that runs the plan)`,
  };
}

function ledgerOf(stdout: string, binary: string): LastApply {
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    return { known: false, reason: `\`${binary} output -json ${LEDGER_OUTPUT}\` printed no JSON` };
  }
  const ledger = typeof value === "string" ? decodeLedger(value) : undefined;
  return ledger
    ? { known: true, ledger }
    : { known: false, reason: `the state's ${LEDGER_OUTPUT} output is not a ledger of this version of cdktf-gpucloud` };
}
