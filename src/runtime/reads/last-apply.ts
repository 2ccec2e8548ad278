import { execFile } from "node:child_process";

import { CDKTF_TERRAFORM_BINARY_ENV, CredentialEnv, decodeLedger, LEDGER_OUTPUT, type LedgerToken } from "../../protocol";

/**
 * What the last apply of this stack managed, as its Terraform state keeps it (the ledger output,
 * LEDGER_OUTPUT): read by the plan-time read with `terraform output -json`, run in the stack
 * folder and workspace by the binary that runs the plan, as far as it can be named (Terraform
 * passes its own path to no child). Every backend works this way (local, S3, GCS, azurerm, pg,
 * HTTP, HCP Terraform in local execution): the state is the one thing every pipeline keeps.
 */
export type LastApply =
  /** `ledger` is undefined before any apply (no state, or no ledger in it yet). */
  | { readonly known: true; readonly ledger: ReadonlyMap<string, LedgerToken> | undefined }
  | { readonly known: false; readonly reason: string };

/** Variables the plan's own command line and logging bring, which `output` refuses or would log the state with. */
const NOT_FOR_THE_CHILD = ["TF_CLI_ARGS", "TF_CLI_ARGS_output", "TF_LOG", "TF_LOG_CORE", "TF_LOG_PROVIDER", "TF_LOG_PATH"];

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

/**
 * `terraform output -json` in `cwd` and `workspace`, within `timeoutMs` (then killed outright:
 * Terraform takes SIGTERM as a request to finish what it waits for), or until `signal` aborts it.
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
  for (const binary of candidates(env)) {
    const ran = await new Promise<{ missing: boolean; error?: string; stdout: string }>((resolve) => {
      const options = { cwd, env: childEnv, timeout: timeoutMs, killSignal: "SIGKILL" as const, maxBuffer: 256 * 1024 * 1024, signal };
      execFile(binary, ["output", "-no-color", "-json"], options, (err, stdout, stderr) => {
        if (!err) return resolve({ missing: false, stdout });
        const failed = err as NodeJS.ErrnoException & { killed?: boolean; signal?: string };
        if (failed.code === "ENOENT") return resolve({ missing: true, stdout: "" });
        const why = failed.killed
          ? `no answer within ${Math.ceil(timeoutMs / 1000)} s`
          : firstError(stderr) || (failed.signal ? `killed by ${failed.signal}` : `exit code ${String(failed.code)}`);
        resolve({ missing: false, error: `\`${binary} output -json\` failed: ${why}`, stdout: "" });
      });
    });
    if (ran.missing) continue;
    if (ran.error !== undefined) return { known: false, reason: ran.error };
    return ledgerOf(ran.stdout, binary);
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
  let outputs: Record<string, { value?: unknown }>;
  try {
    outputs = JSON.parse(stdout) as Record<string, { value?: unknown }>;
  } catch {
    return { known: false, reason: `\`${binary} output -json\` printed no JSON` };
  }
  const value = outputs[LEDGER_OUTPUT]?.value;
  if (value === undefined) return { known: true, ledger: undefined };
  const ledger = typeof value === "string" ? decodeLedger(value) : undefined;
  return ledger ? { known: true, ledger } : { known: false, reason: `the state's ${LEDGER_OUTPUT} output is not a ledger of this library` };
}
