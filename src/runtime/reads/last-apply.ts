import { spawn } from "node:child_process";

import { redactUrlSecrets } from "../../client/redact";
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
  /** `fix`: the first thing to do about `reason`, a sentence. */
  | { readonly known: false; readonly reason: string; readonly fix: string };

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
 * How Terraform (and OpenTofu) says a state holds no output of that name, with or without a state.
 * Only this failure leads on to `state list`; should the text ever change, an unfinished first apply
 * fails closed, naming the way on, rather than going on.
 */
const NO_SUCH_OUTPUT = `Output "${LEDGER_OUTPUT}" not found`;

/** What `state list` says of a workspace without a state (errStateNotFound): nothing applied. */
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

/** The first line that says what went wrong, without what a URL in it may carry of a backend's credentials. */
function firstError(stderr: string): string {
  const lines = stderr.split("\n").map((l) => l.replace(/^[│╷╵\s]+/, "").trim());
  const line = lines.find((l) => l.startsWith("Error")) ?? lines.find((l) => l !== "") ?? "";
  // Before the cut, so that a credential at the cut cannot show in part (the output redacts the rest).
  return redactUrlSecrets(line).slice(0, 200);
}

/** How one run of the binary ended: `stopped` when this process stopped it (time, bound, abort). */
type Ran =
  | { readonly missing: true }
  | { readonly missing: false; readonly ok: true; readonly stdout: string }
  | { readonly missing: false; readonly ok: false; readonly stderr: string; readonly why: string; readonly stopped: boolean };

/** Process groups still running, ended if this process exits first (a watchdog, a failed walk). */
const running = new Set<number>();
let endGroupsOnExit = false;

function killGroup(pid: number): boolean {
  try {
    process.kill(-pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `binary args` in its own process group, so that a wrapper which does not exec the real
 * terraform is stopped with everything it started: SIGKILL to the group at `timeoutMs`, on
 * `signal`, past MAX_OUTPUT_BYTES, once it has exited (a child left behind ends with it), and when
 * this process exits. SIGKILL, since Terraform takes SIGTERM as a request to finish what it waits for.
 */
function runGrouped(
  binary: string,
  args: readonly string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; signal?: AbortSignal },
): Promise<Ran> {
  if (opts.signal?.aborted)
    return Promise.resolve({ missing: false, ok: false, stderr: "", why: "stopped: the read ended", stopped: true });
  if (!endGroupsOnExit) {
    endGroupsOnExit = true;
    process.on("exit", () => running.forEach(killGroup));
  }
  return new Promise((resolve) => {
    const child = spawn(binary, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const pid = child.pid;
    if (pid !== undefined) running.add(pid);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let stopped: string | undefined;
    let settled = false;
    const stop = (why?: string) => {
      stopped ??= why;
      if (pid === undefined) return;
      // No process groups (Windows): the child itself, and its pipes are let go below.
      if (!killGroup(pid) && why !== undefined) child.kill("SIGKILL");
      if (why !== undefined) finish(null, null);
    };
    const timer = setTimeout(() => stop(`no answer within ${Math.ceil(opts.timeoutMs / 1000)} s`), opts.timeoutMs);
    const onAbort = () => stop("stopped: the read ended");
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    /** Resolves once: the timer, the abort listener and the group's entry go with it. */
    const settle = (ran: () => Ran) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      if (pid !== undefined) running.delete(pid);
      resolve(ran());
    };
    const finish = (code: number | null, signal: NodeJS.Signals | null) =>
      settle(() => {
        // Whatever still holds the pipes (a child of a wrapper where the group could not be ended) is not waited for.
        child.stdout.destroy();
        child.stderr.destroy();
        const stderr = Buffer.concat(err).toString("utf8");
        if (stopped === undefined && code === 0) return { missing: false, ok: true, stdout: Buffer.concat(out).toString("utf8") };
        const why = stopped ?? (firstError(stderr) || (signal ? `killed by ${signal}` : `exit code ${String(code)}`));
        return { missing: false, ok: false, stderr, why, stopped: stopped !== undefined };
      });
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) return stop(`printed more than ${MAX_OUTPUT_BYTES / 1024 / 1024} MiB`);
      into.push(chunk);
    };
    child.stdout.on("data", collect(out));
    child.stderr.on("data", collect(err));
    child.on("error", (e: NodeJS.ErrnoException) =>
      settle(() => (e.code === "ENOENT" ? { missing: true } : { missing: false, ok: false, stderr: "", why: e.message, stopped: false })),
    );
    // A wrapper's children left behind end with it (they may hold its pipes open).
    child.on("exit", () => stop());
    child.on("close", finish);
  });
}

/** What to do where the state could not be read with `binary` (it ran). */
function readFix(binary: string): string {
  return (
    `Make the state readable by \`${binary} output\` in this folder and workspace (the backend's settings and credentials in ` +
    `the environment of the process that runs terraform; ${CredentialEnv.TIMEOUT_SECONDS}: the read has half the budget, at ` +
    `most 60 s), or set ${CredentialEnv.TERRAFORM} to the terraform or tofu that runs this plan`
  );
}

/**
 * `terraform output -json <ledger>` in `cwd` and `workspace`, within `timeoutMs`, or until `signal`
 * aborts it. Where the state has no such output (no state, or no ledger in it), `terraform state
 * list` tells a workspace that never applied a token (known, no ledger) from one whose full apply
 * ended before the ledger (the roster and no ledger: known, said as `unfinished`) and from one with
 * token writes but neither (a first apply with -target, a destroy that did not finish: not known).
 * `childEnv` drops these variables too (the accounts' secrets: terraform's backend needs none of them).
 */
export async function readLastApply(
  env: NodeJS.ProcessEnv,
  cwd: string,
  workspace: string,
  timeoutMs: number,
  signal?: AbortSignal,
  notForTheChild: readonly string[] = [],
): Promise<LastApply> {
  const childEnv: NodeJS.ProcessEnv = { ...env, TF_WORKSPACE: workspace, TF_IN_AUTOMATION: "1", TF_INPUT: "0", CHECKPOINT_DISABLE: "1" };
  for (const name of [...NOT_FOR_THE_CHILD, ...notForTheChild]) delete childEnv[name];
  const deadline = Date.now() + timeoutMs;
  const run = (binary: string, args: string[]) =>
    runGrouped(binary, args, { cwd, env: childEnv, timeoutMs: Math.max(1, deadline - Date.now()), signal });
  for (const binary of candidates(env)) {
    const output = await run(binary, ["output", "-no-color", "-json", LEDGER_OUTPUT]);
    if (output.missing) continue;
    if (output.ok) return ledgerOf(output.stdout, binary);
    if (output.stopped || !output.stderr.includes(NO_SUCH_OUTPUT)) {
      return { known: false, reason: `\`${binary} output -json ${LEDGER_OUTPUT}\` failed: ${output.why}`, fix: readFix(binary) };
    }
    const list = await run(binary, ["state", "list", "-no-color"]);
    if (list.missing || (!list.ok && (list.stopped || !list.stderr.includes(NO_STATE)))) {
      const why = list.missing ? "it was gone" : list.why;
      return { known: false, reason: `\`${binary} state list\` failed: ${why}`, fix: readFix(binary) };
    }
    if (!list.ok) return { known: true, ledger: undefined };
    return ledgerlessState(list.stdout.split("\n"));
  }
  const variable = namingVariable(env);
  return variable !== undefined
    ? {
        known: false,
        reason: `${variable} names "${env[variable]}", which cannot be found`,
        fix: `Set ${variable} to the terraform or tofu that runs this plan`,
      }
    : {
        known: false,
        reason: `no terraform or tofu on PATH`,
        fix: `Set ${CredentialEnv.TERRAFORM} to the terraform or tofu that runs this plan (on Atlantis, its versioned binary)`,
      };
}

/** What a state without the ledger output says of the last apply, from the addresses it lists. */
function ledgerlessState(addresses: readonly string[]): LastApply {
  const kinds = addresses.map((address) => ({ address: address.trim(), kind: tokenWriteKind(address) }));
  // Every full apply creates the roster, which refers to no token's write: with it, the apply ended before its last step (a fault, a kill).
  if (kinds.some((k) => k.kind === "roster")) {
    return {
      known: true,
      ledger: undefined,
      unfinished:
        `an apply of this stack ended before it wrote ${LEDGER_OUTPUT} (its state holds the token roster and no ledger), so ` +
        `this plan cannot check the credentials against the account that apply wrote to: retry with the credentials it used, ` +
        `and the next apply writes the ledger`,
    };
  }
  const held = kinds.filter((k) => k.kind === "token").map((k) => k.address);
  if (held.length === 0) return { known: true, ledger: undefined };
  return {
    known: false,
    reason:
      `the state holds this library's token writes (${held.slice(0, 3).join(", ")}${held.length > 3 ? ", …" : ""}) but no ` +
      `${LEDGER_OUTPUT} output: a first apply with -target (Terraform writes no output that refers to what it left out), or a ` +
      `destroy that did not finish (it removes the outputs first)`,
    fix: `Finish it with a full apply (no -target) or the destroy again, with these credentials checked as below`,
  };
}

function ledgerOf(stdout: string, binary: string): LastApply {
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    return { known: false, reason: `\`${binary} output -json ${LEDGER_OUTPUT}\` printed no JSON`, fix: readFix(binary) };
  }
  const ledger = typeof value === "string" ? decodeLedger(value) : undefined;
  return ledger
    ? { known: true, ledger }
    : {
        known: false,
        reason: `the state's ${LEDGER_OUTPUT} output is not a ledger of this version of cdktf-gpucloud`,
        fix: `Plan with the version of cdktf-gpucloud that wrote it, or a later one`,
      };
}
