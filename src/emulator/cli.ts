#!/usr/bin/env node
/**
 * `gpucloud-emulator`: runs the in-memory GPU cloud API emulator until SIGINT or SIGTERM.
 * A test tool: it listens on loopback by default and its `/_emulator/` control surface has no
 * authentication.
 */
import { startEmulator } from "./server";
import { type EmulatorOptions, type EmulatorUser, type RunningEmulator, STORE_NAMES, type StoreNames } from "./types";

/** The exit codes, the same as the gpucloud CLI's for the same kinds of failure (docs/emulator.md). */
export const ExitCode = {
  /** Stopped by SIGINT or SIGTERM after serving, or --help. */
  OK: 0,
  /** It could not start (the port is taken, say). */
  CANNOT_START: 1,
  USAGE: 2,
  /** Half of an account's pair of variables is set. */
  CONFIGURATION: 3,
} as const;

export const USAGE = `Usage: gpucloud-emulator [options]

Serves an in-memory GPU cloud API (login, flavors, API tokens) for tests and demos, until
SIGINT (Ctrl-C) or SIGTERM.

Options:
  --host H              address to listen on (default 127.0.0.1; keep it on loopback)
  --port N              port, 0 = a random free port (default 0); the first line printed
                        is "gpucloud emulator listening on http://HOST:PORT"
  --user NAME:PASSWORD  an account that can log in; repeatable, each user its own account
                        (its own API tokens). Puts the password in the process list: for
                        throwaway test passwords only.
  --access-ttl SECONDS  access token lifetime (default 1800)
  --refresh-ttl SECONDS refresh token lifetime (default 7200)
  --latency MS          delay added to every API response (default 0)
  --requests-per-second N  at most N requests per second per user; beyond, 429 with Retry-After
  --logins-per-minute N    at most N logins per minute per user; beyond, 429 with Retry-After
  --store-names HOW     how token names are stored: as-given (default), trimmed or
                        lower-cased (as some services do)
  --verbose             print one line per request (method, path, status, duration)
  -h, --help            print this help

Environment (this shell's, read when no --user is given: the accounts the Terraform
scripts will log in with, so that no password is on the command line):
  GPUCLOUD_USERNAME, GPUCLOUD_PASSWORD
                        one account (both or neither; GPUCLOUD_PASSWORD_MD5 is not
                        enough: the emulator needs the plain password)
  GPUCLOUD_<NAME>_USERNAME, GPUCLOUD_<NAME>_PASSWORD
                        one more account per prefix (a GpuCloudAccount's envPrefix)
With neither --user nor these, it serves the demo account demo:demo-password and says so.

Control surface (not part of the API; no authentication, keep it on loopback):
  GET    /_emulator/state                 tokens (with values), request statistics, faults
  POST   /_emulator/faults                set injected faults (JSON body, as setFaults())
  POST   /_emulator/tokens                add a token as if made in the console ({name,
                                          description?, createdAt?}; with count: N, N tokens
                                          name-1 … name-N sharing one createdAt)
  DELETE /_emulator/tokens/{id}           delete a token as if in the console
  POST   /_emulator/expire-access-tokens  make every issued access token expire now
  POST   /_emulator/reset-stats           zero the request statistics

Exit status:
  ${ExitCode.OK}  stopped by SIGINT or SIGTERM, or --help
  ${ExitCode.CANNOT_START}  it could not start (the port is taken, say)
  ${ExitCode.USAGE}  bad usage: an unknown option or a bad option value
  ${ExitCode.CONFIGURATION}  configuration: half of an account's pair of variables is set`;

export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Stops the emulator when aborted. Without it, SIGINT and SIGTERM do. */
  readonly signal?: AbortSignal;
  /** Where GPUCLOUD_USERNAME/GPUCLOUD_PASSWORD are read from (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

interface ParsedArgs {
  readonly help: boolean;
  readonly verbose: boolean;
  readonly options: EmulatorOptions;
}

class UsageError extends Error {}
/** The environment cannot be served as it is: it names the variables to set. */
class ConfigurationError extends Error {}

/** Where the variables are read from, as the messages say it. */
const ENVIRONMENT = "in this shell's environment";

function integer(flag: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`${flag} must be an integer between ${min} and ${max} (got "${raw}")`);
  }
  return Number(raw);
}

/**
 * The accounts the Terraform scripts will log in with, without a password on a command line:
 * GPUCLOUD_USERNAME/GPUCLOUD_PASSWORD, and GPUCLOUD_<NAME>_USERNAME/GPUCLOUD_<NAME>_PASSWORD for
 * every other prefix that has a username or a password, each its own account. Half of a pair is
 * an error, not a reason to fall back to the demo account: the scripts would then fail to log in
 * with a confusing 401 instead of this message.
 */
function accountsFromEnv(env: NodeJS.ProcessEnv): EmulatorUser[] {
  const prefixes = new Set<string>(["GPUCLOUD_"]);
  for (const name of Object.keys(env)) {
    const m = /^(GPUCLOUD_(?:[A-Z0-9_]*_)?)(?:USERNAME|PASSWORD)$/.exec(name);
    if (m && env[name]) prefixes.add(m[1]);
  }
  const users: EmulatorUser[] = [];
  for (const prefix of prefixes) {
    const user = accountFromEnv(env, prefix);
    if (!user) continue;
    const twice = users.find((u) => u.username === user.username);
    if (twice)
      throw new ConfigurationError(
        `${prefix}USERNAME names the user "${user.username}" of another account too (${twice.account}USERNAME): give each account its own user`,
      );
    users.push(user);
  }
  return users;
}

function accountFromEnv(env: NodeJS.ProcessEnv, prefix: string): EmulatorUser | undefined {
  const [U, P, M] = [`${prefix}USERNAME`, `${prefix}PASSWORD`, `${prefix}PASSWORD_MD5`];
  const username = env[U] ?? "";
  const password = env[P] ?? "";
  if (username === "" && password === "") {
    if (env[M]) {
      throw new ConfigurationError(
        `${M} is set ${ENVIRONMENT} without ${U}: set ${U} and ${P} (the emulator needs the plain password), or pass --user`,
      );
    }
    return undefined;
  }
  if (username === "") throw new ConfigurationError(`${P} is set ${ENVIRONMENT} but ${U} is not: set both, or pass --user NAME:PASSWORD`);
  if (password === "") {
    const md5 = env[M] ? ` (${M} is not enough: the emulator needs the plain password)` : "";
    throw new ConfigurationError(`${U} is set ${ENVIRONMENT} but ${P} is not${md5}: set both, or pass --user NAME:PASSWORD`);
  }
  return { username, password, account: prefix };
}

/**
 * Parses the command line, and the environment when it names no user; throws a UsageError on an
 * argument it does not understand, a ConfigurationError on half of an account's pair.
 */
export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): ParsedArgs {
  let help = false;
  let verbose = false;
  let host: string | undefined;
  let port: number | undefined;
  let accessTokenTtlSeconds: number | undefined;
  let refreshTokenTtlSeconds: number | undefined;
  let latencyMs: number | undefined;
  let requestsPerSecond: number | undefined;
  let loginsPerMinute: number | undefined;
  let storeNames: StoreNames | undefined;
  const users: EmulatorUser[] = [];

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      if (eq > 0) return arg.slice(eq + 1);
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("--")) throw new UsageError(`${flag} needs a value`);
      i += 1;
      return next;
    };
    switch (flag) {
      case "--help":
      case "-h":
        help = true;
        break;
      case "--verbose":
        verbose = true;
        break;
      case "--host":
        host = value();
        if (host === "") throw new UsageError("--host must not be empty");
        break;
      case "--port":
        port = integer(flag, value(), 0, 65535);
        break;
      case "--user": {
        const spec = value();
        const colon = spec.indexOf(":");
        if (colon <= 0 || colon === spec.length - 1) throw new UsageError("--user must be NAME:PASSWORD");
        const username = spec.slice(0, colon);
        if (users.some((u) => u.username === username)) throw new UsageError(`--user ${username} given twice`);
        users.push({ username, password: spec.slice(colon + 1), account: username });
        break;
      }
      case "--access-ttl":
        accessTokenTtlSeconds = integer(flag, value(), 1);
        break;
      case "--refresh-ttl":
        refreshTokenTtlSeconds = integer(flag, value(), 1);
        break;
      case "--latency":
        latencyMs = integer(flag, value(), 0);
        break;
      case "--requests-per-second":
        requestsPerSecond = integer(flag, value(), 1);
        break;
      case "--logins-per-minute":
        loginsPerMinute = integer(flag, value(), 1);
        break;
      case "--store-names": {
        const how = value();
        if (!(STORE_NAMES as readonly string[]).includes(how))
          throw new UsageError(`--store-names must be one of ${STORE_NAMES.join(", ")} (got "${how}")`);
        storeNames = how as StoreNames;
        break;
      }
      default:
        throw new UsageError(`unknown argument "${flag}"`);
    }
  }
  if (users.length === 0) users.push(...accountsFromEnv(env));
  // One user is the shared account, as always; several are one account each.
  const accounts = users.length > 1 ? users : users.map(({ account: _account, ...user }) => user);
  return {
    help,
    verbose,
    options: {
      ...(host !== undefined && { host }),
      ...(port !== undefined && { port }),
      ...(accounts.length > 0 && { users: accounts }),
      ...(accessTokenTtlSeconds !== undefined && { accessTokenTtlSeconds }),
      ...(refreshTokenTtlSeconds !== undefined && { refreshTokenTtlSeconds }),
      ...(latencyMs !== undefined && { faults: { latencyMs } }),
      ...(storeNames !== undefined && { storeNames }),
      ...((requestsPerSecond !== undefined || loginsPerMinute !== undefined) && {
        rateLimit: {
          ...(requestsPerSecond !== undefined && { requestsPerSecond }),
          ...(loginsPerMinute !== undefined && { loginsPerMinute }),
        },
      }),
    },
  };
}

const defaultIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** Runs the CLI; resolves with the exit code ({@link ExitCode}) once the emulator has stopped. */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs(argv, io.env ?? process.env);
  } catch (e) {
    if (e instanceof ConfigurationError) {
      io.err(`gpucloud-emulator: error: ${e.message}`);
      return ExitCode.CONFIGURATION;
    }
    if (!(e instanceof UsageError)) throw e;
    io.err(`gpucloud-emulator: error: ${e.message}`);
    io.err("Run `gpucloud-emulator --help` for the options.");
    return ExitCode.USAGE;
  }
  if (parsed.help) {
    io.out(USAGE);
    return ExitCode.OK;
  }
  let emulator: RunningEmulator;
  try {
    emulator = await startEmulator({ ...parsed.options, ...(parsed.verbose && { log: io.out }) });
  } catch (e) {
    io.err(`gpucloud-emulator: error: cannot start: ${e instanceof Error ? e.message : String(e)}`);
    return ExitCode.CANNOT_START;
  }
  io.out(`gpucloud emulator listening on ${emulator.url}`);
  const users = parsed.options.users;
  io.out(
    users
      ? `users: ${users.map((u) => u.username).join(", ")}${users.length > 1 ? " (each its own account)" : ""}`
      : "users: demo (the built-in demo account: no --user, no GPUCLOUD_USERNAME/GPUCLOUD_PASSWORD; see --help)",
  );

  await new Promise<void>((resolve) => {
    if (io.signal) {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener("abort", () => resolve(), { once: true });
      return;
    }
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await emulator.close();
  io.out("gpucloud emulator stopped");
  return ExitCode.OK;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`gpucloud-emulator: error: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = ExitCode.CANNOT_START;
    },
  );
}
