/**
 * The script that Terraform runs; bundled into lib/assets/gpucloud-tf-main.js, which the file
 * Terraform starts (./launcher.ts, lib/assets/gpucloud-tf.js) loads and runs:
 *
 *   node gpucloud-tf.js <command>
 *
 * See src/protocol (commands.ts) for the commands and how Terraform calls each of them.
 */
import { type FlavorPreferenceQuery, RuntimeCommand } from "../protocol";
import { runBudgetMsOrDefault, secretValues } from "../shared/config";
import type { RuntimeContext } from "../shared/context";
import { errorMessage } from "../shared/error-message";
import { createOutput, type Output, Redactor } from "../shared/output";
import { untestedNodeLineWarning } from "./io/node-line";
import { FdWriter, readQuery } from "./io/process-io";
import { findFlavors } from "./reads/flavor-command";
import { preferFlavor } from "./reads/preference-command";
import { stackRead } from "./reads/stack-read";
import { releaseRoster } from "./tokens/token-roster";
import { tokenValues } from "./tokens/token-value";
import { writeTokens } from "./writer/token-writer";

/** Commands run as a `data "external"` program: JSON query on stdin, JSON object on stdout. */
const EXTERNAL_COMMANDS: Record<string, (ctx: RuntimeContext, query: Record<string, string>) => Promise<object>> = {
  [RuntimeCommand.FLAVORS]: findFlavors,
  [RuntimeCommand.FLAVOR_PREFERENCE]: (ctx, q) => preferFlavor(ctx, q as FlavorPreferenceQuery),
  [RuntimeCommand.STACK_READ]: stackRead,
  // Run by the ephemeral local_command, which passes stdin and reads stdout as `external` does.
  [RuntimeCommand.TOKEN_VALUE]: tokenValues,
};

/** Commands run as `local-exec` provisioners: inputs in the environment, progress on stdout. */
const PROVISIONER_COMMANDS: Record<string, (ctx: RuntimeContext) => Promise<void>> = {
  [RuntimeCommand.TOKEN_WRITER]: writeTokens,
  [RuntimeCommand.TOKEN_ROSTER_RELEASE]: releaseRoster,
};

export interface MainIo {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readStdin(): Promise<string>;
  writeStdout(text: string): void;
  writeStderr(text: string): void;
  /** See RuntimeContext.stop. */
  readonly stop?: AbortSignal;
  /** See RuntimeContext.extendWatchdog. */
  readonly extendWatchdog?: (ms: number) => void;
}

/** Runs one command and returns the exit code. Never throws. */
export async function main(io: MainIo): Promise<number> {
  const redactor = new Redactor(secretValues(io.env));
  const command = io.argv[0];
  const external = command !== undefined ? EXTERNAL_COMMANDS[command] : undefined;
  const provisioner = command !== undefined ? PROVISIONER_COMMANDS[command] : undefined;
  // The external protocol reserves stdout for the result, so progress goes to stderr there.
  const out: Output = createOutput(external ? io.writeStderr : io.writeStdout, redactor);
  const fail = (message: string): number => {
    io.writeStderr(`gpucloud: error: ${out.redact(message)}\n`);
    return 1;
  };

  if (!external && !provisioner) {
    const known = [...Object.keys(EXTERNAL_COMMANDS), ...Object.keys(PROVISIONER_COMMANDS)].join(", ");
    return fail(`unknown command "${command ?? ""}"; expected one of: ${known}`);
  }
  const ctx: RuntimeContext = {
    env: io.env,
    cwd: io.cwd,
    out,
    stop: io.stop,
    extendWatchdog: io.extendWatchdog,
  };
  try {
    if (external) {
      const query = parseQuery(await io.readStdin());
      const result = await external(ctx, query);
      io.writeStdout(JSON.stringify(result) + "\n");
    } else if (provisioner) {
      await provisioner(ctx);
    }
    return 0;
  } catch (err) {
    return fail(`${command}: ${errorMessage(err)}`);
  }
}

/** The external data source sends one JSON object whose values are strings (nulls dropped). */
export function parseQuery(text: string): Record<string, string> {
  const trimmed = text.trim();
  if (trimmed === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    throw new Error("the query on stdin is not JSON (this command is meant to run as an external data source program)");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error("the query on stdin must be a JSON object");
  }
  const query: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== "string") throw new Error(`query.${key} must be a string`);
    query[key] = value;
  }
  return query;
}

/**
 * A last line of defence against a hang: the client's own deadline should always come first.
 * Returns what moves it later (see RuntimeContext.extendWatchdog).
 */
function startWatchdog(env: NodeJS.ProcessEnv, writeStderr: (text: string) => void): (ms: number) => void {
  let budgetMs = runBudgetMsOrDefault(env);
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(
      () => {
        writeStderr(`gpucloud: error: gave up after ${Math.round(budgetMs / 1000) + 15}s without finishing\n`);
        process.exit(1);
      },
      Math.max(0, started + budgetMs + 15_000 - Date.now()),
    );
    timer.unref();
  };
  arm();
  return (ms) => {
    budgetMs += ms;
    arm();
  };
}

/**
 * What stops a writing command after the requests in flight: SIGINT and SIGTERM (Terraform
 * interrupted, a pipeline cancelled) and a closed stdout (EPIPE: terraform, which reads it, is gone).
 * Without a listener Node would end the process at once, between a POST and its report.
 */
function stopSignal(command: string | undefined): AbortController {
  const stop = new AbortController();
  // A read has nothing to finish: the signal ends it as Node does by default.
  if (command !== RuntimeCommand.TOKEN_WRITER) return stop;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (stop.signal.aborted) process.exit(130);
      stop.abort();
    });
  }
  return stop;
}

/**
 * Runs the command named on the command line in this process, as Terraform starts it; the file
 * Terraform starts (./launcher.ts, lib/assets/gpucloud-tf.js) calls it. Ends the process.
 */
export function runScript(): void {
  const stop = stopSignal(process.argv[2]);
  const stdout = new FdWriter(
    1,
    () => process.stdout,
    undefined,
    () => stop.abort(),
  );
  const stderr = new FdWriter(
    2,
    () => process.stderr,
    undefined,
    () => stop.abort(),
  );
  const extendWatchdog = startWatchdog(process.env, (t) => stderr.write(t));
  // stderr reaches Terraform's log for provisioners (merged with stdout) and for failed reads.
  const nodeLine = untestedNodeLineWarning(process.versions.node);
  if (nodeLine !== undefined) stderr.write(`gpucloud: WARNING: ${nodeLine}\n`);
  void main({
    argv: process.argv.slice(2),
    env: process.env,
    cwd: process.cwd(),
    readStdin: () => readQuery(),
    writeStdout: (t) => stdout.write(t),
    writeStderr: (t) => stderr.write(t),
    stop: stop.signal,
    extendWatchdog,
  }).then((code) => exitWhenFlushed(code, [stdout, stderr]));
}

/**
 * Ends the process once everything written so far has reached stdout and stderr, instead of
 * waiting for the event loop to drain: nothing a command leaves behind (a watchdog timer, a
 * closing socket, a pending retry sleep after an error) is worth a moment of Terraform's time.
 */
function exitWhenFlushed(code: number, writers: readonly FdWriter[]): void {
  process.exitCode = code;
  let pending = writers.length;
  for (const writer of writers) {
    writer.flush(() => {
      if (--pending === 0) process.exit(code);
    });
  }
}
