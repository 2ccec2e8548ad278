// Double of hashicorp/local v2.7.0, the first release with `ephemeral "local_command"`
// (internal/provider/ephemeral_local_command.go; v2.8.0 and v2.9.0 only change its copyright
// line), built with Go 1.24 and terraform-plugin-framework v1.17. Only the ephemeral resource is
// served: local_file, local_sensitive_file, the data sources, the direxists function and the
// local_command action are not (Terraform then refuses them itself, so nothing passes here that
// would fail with the real provider).
//
// Matched in the real source, behaviour by behaviour:
// - schema: command (string, required), arguments (list of string, optional), stdin (string,
//   optional), working_directory (string, optional), allow_non_zero_exit_code (bool, optional);
//   computed exit_code (number: an Int64Attribute), stdout, stderr; nothing sensitive;
// - Open: exec.LookPath(command) first, on the PATH of the provider process; unlike the external
//   provider it does not tolerate Go's ErrDot (a name found through a relative PATH entry), so
//   that fails too: "Command Lookup Failed" with Platform/Command/Error lines;
// - null arguments are dropped; stdin is given only when set (else the program reads /dev/null);
//   cmd.Dir = working_directory ("" or null: the provider's cwd, Terraform's); cmd.Env is nil, so
//   the program gets the provider process's whole environment (Terraform's plus go-plugin's);
// - stdout and stderr are set only when non-empty (null otherwise); exit_code is set whenever the
//   process ran (-1 after a signal), null when it could not start;
// - a non-zero exit (or a signal) without allow_non_zero_exit_code is an error carrying stderr
//   ("Command Execution Failed", "Command: <cmd.String()>", "Command Error: <stderr>",
//   "State: exit status N"); a failure to start is the other "Command Execution Failed" text;
//   with allow_non_zero_exit_code = true a non-zero exit is a success;
// - the result echoes the configuration, as plugin-framework's Get/Set round trip does;
// - the resource implements neither Renew nor Close (see server.ts for the framework's answers);
// - exec.CommandContext: the program is killed (SIGKILL) when Terraform cancels the call.
import path from "node:path";

import { type CtyObject, type CtyValue, isObject } from "./cty";
import { type ExternalContext, providerProcessEnv, type RunOutcome, runProgram } from "./external-provider";
import { lookPath, startProcessDirError } from "./go-exec";
import { attrPath, type BlockSpec, type Diagnostic, errorDiag } from "./protocol";
import type { CallContext, EphemeralResourceDouble, ProviderDouble } from "./server";

export const LOCAL_PROVIDER_ADDRESS = "registry.terraform.io/hashicorp/local";

const localCommandSchema: BlockSpec = {
  description: "Runs an executable on the local machine and returns the exit code, stdout and stderr (provider double).",
  attributes: [
    {
      name: "command",
      type: "string",
      required: true,
      description: "Executable name to be discovered on the PATH or absolute path to executable.",
    },
    {
      name: "arguments",
      type: ["list", "string"],
      optional: true,
      description: "Arguments to be passed to the given command. Any null arguments will be removed from the list.",
    },
    {
      name: "stdin",
      type: "string",
      optional: true,
      description: "Data to be passed to the given command's standard input as a UTF-8 string.",
    },
    { name: "working_directory", type: "string", optional: true, description: "The directory path where the command should be executed." },
    {
      name: "allow_non_zero_exit_code",
      type: "bool",
      optional: true,
      description: "Treat a non-zero exit code as a successful execution.",
    },
    { name: "exit_code", type: "number", computed: true, description: "The exit code returned by the command." },
    { name: "stdout", type: "string", computed: true, description: "Data returned from the command's standard output stream." },
    { name: "stderr", type: "string", computed: true, description: "Data returned from the command's standard error stream." },
  ],
};

/** Go's exec.ErrDot, as exec.Error prints it. */
const errDot = (name: string): string => `exec: ${JSON.stringify(name)}: cannot run executable found relative to current directory`;

function lookupFailed(command: string, error: string): Diagnostic {
  return errorDiag(
    "Command Lookup Failed",
    "The ephemeral resource received an unexpected error while attempting to find the command." +
      "\n\n" +
      "The command must be accessible according to the platform where Terraform is running." +
      "\n\n" +
      "If the expected command should be automatically found on the platform where Terraform is running, " +
      "ensure that the command is in an expected directory. On Unix-based platforms, these directories are " +
      "typically searched based on the '$PATH' environment variable. On Windows-based platforms, these directories " +
      "are typically searched based on the '%PATH%' environment variable." +
      "\n\n" +
      "If the expected command is relative to the Terraform configuration, it is recommended that the command name includes " +
      "the interpolated value of 'path.module' before the command name to ensure that it is compatible with varying module usage. For example: \"${path.module}/my-command\"" +
      "\n\n" +
      "The command must also be executable according to the platform where Terraform is running. On Unix-based platforms, the file on the filesystem must have the executable bit set. " +
      "On Windows-based platforms, no action is typically necessary." +
      "\n\n" +
      `Platform: ${process.platform}\n` +
      `Command: ${command}\n` +
      `Error: ${error}`,
    attrPath("command"),
  );
}

async function openLocalCommand(
  config: CtyValue,
  ctx: CallContext,
  run: ExternalContext,
): Promise<{ result: CtyValue; diagnostics: Diagnostic[] }> {
  if (!isObject(config)) throw new Error("config of ephemeral.local_command is not an object");
  const command = typeof config.command === "string" ? config.command : "";
  const env = providerProcessEnv(run.env);
  const result: CtyObject = {
    command: config.command ?? null,
    arguments: config.arguments ?? null,
    stdin: config.stdin ?? null,
    working_directory: config.working_directory ?? null,
    allow_non_zero_exit_code: config.allow_non_zero_exit_code ?? null,
    exit_code: null,
    stdout: null,
    stderr: null,
  };

  // exec.LookPath(command): a name without a slash is searched on PATH, and a hit through a
  // relative entry is ErrDot, an error here.
  const found = lookPath(command, env, run.cwd);
  const dotHit = found.ok && !command.includes("/") && !path.isAbsolute(found.path);
  if (!found.ok || dotHit) {
    return { result, diagnostics: [lookupFailed(command, found.ok ? errDot(command) : found.error)] };
  }
  const args = (Array.isArray(config.arguments) ? config.arguments : []).filter((a): a is string => typeof a === "string");
  // cmd.Path: LookPath's answer for a bare name, the name itself otherwise; cmd.String() adds the arguments.
  const cmdPath = found.path;
  const cmdString = [cmdPath, ...args].join(" ");
  const workingDir = typeof config.working_directory === "string" ? config.working_directory : "";
  const childCwd = workingDir === "" ? run.cwd : path.resolve(run.cwd, workingDir);
  const dirError = workingDir === "" ? undefined : startProcessDirError(workingDir, childCwd, cmdPath);
  let outcome: RunOutcome;
  if (dirError !== undefined) {
    outcome = { stdout: Buffer.alloc(0), stderr: "", error: dirError };
  } else {
    const stdin = typeof config.stdin === "string" ? config.stdin : "";
    ctx.log(`local: running ${JSON.stringify([cmdPath, ...args])} in ${childCwd} (${stdin.length} bytes on stdin)`);
    outcome = await runProgram(path.resolve(childCwd, cmdPath), cmdPath, command, args, childCwd, env, stdin, ctx);
    // Lengths only: the output may be a secret.
    ctx.log(
      `local: ${cmdPath} finished (${outcome.error ?? "ok"}), ${outcome.stdout.length} bytes on stdout, ${outcome.stderr.length} on stderr`,
    );
  }
  const stdout = outcome.stdout.toString("utf8");
  if (outcome.stderr.length > 0) result.stderr = outcome.stderr;
  if (stdout.length > 0) result.stdout = stdout;
  if (outcome.exitCode !== undefined) result.exit_code = outcome.exitCode;

  if (outcome.error === undefined) return { result, diagnostics: [] };
  if (outcome.exitError) {
    if (config.allow_non_zero_exit_code === true) return { result, diagnostics: [] };
    return {
      result,
      diagnostics: [
        errorDiag(
          "Command Execution Failed",
          "The ephemeral resource executed the command but received a non-zero exit code. If a non-zero exit code is expected " +
            'and can be handled in configuration, set "allow_non_zero_exit_code" to true.' +
            "\n\n" +
            `Command: ${cmdString}\n` +
            `Command Error: ${outcome.stderr}\n` +
            `State: ${outcome.error}`,
          attrPath("command"),
        ),
      ],
    };
  }
  return {
    result,
    diagnostics: [
      errorDiag(
        "Command Execution Failed",
        "The ephemeral resource received an unexpected error while attempting to execute the command." +
          "\n\n" +
          `Command: ${cmdString}\n` +
          `State: ${outcome.error}`,
        attrPath("command"),
      ),
    ],
  };
}

const localCommand = (run: ExternalContext): EphemeralResourceDouble => ({
  schema: localCommandSchema,
  // The real schema has no validators.
  open: (config, ctx) => openLocalCommand(config, ctx, run),
});

/** The local double; programs run in `run.cwd` with `run.env` (default: this process's). */
export function localProvider(run: ExternalContext = { cwd: process.cwd(), env: process.env }): ProviderDouble {
  return {
    address: LOCAL_PROVIDER_ADDRESS,
    name: "local",
    providerSchema: { attributes: [] },
    resources: {},
    dataSources: {},
    ephemeralResources: { local_command: localCommand(run) },
  };
}
