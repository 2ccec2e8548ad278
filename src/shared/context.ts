import { ApiClient } from "../client/client";
import { openNodeHttpSender } from "../client/node-http-sender";
import { type ConfigReader, loadConfig } from "./config";
import type { Output } from "./output";

/** What a command needs from the world; tests build one in-process. */
export interface RuntimeContext {
  readonly env: NodeJS.ProcessEnv;
  /** Terraform's working directory (the stack folder). */
  readonly cwd: string;
  readonly out: Output;
  /** Who reads the configuration, for its messages (the CLI sets it; the script's is the default). */
  readonly configReader?: ConfigReader;
  /** Aborted on SIGINT, SIGTERM or a closed stdout: a command that writes stops after what is in flight. */
  readonly stop?: AbortSignal;
  /** Moves the script's last-resort watchdog (see main.ts) `ms` later, for a command whose work outgrows the budget. */
  readonly extendWatchdog?: (ms: number) => void;
}

/**
 * The end of a run's budget (GPUCLOUD_TIMEOUT_SECONDS), fixed when the run first connects and
 * shared by every client of that run (one per base URL), so that the budget bounds the whole
 * run and not each operation. One context is one run.
 */
const runDeadlines = new WeakMap<RuntimeContext, number>();

function runDeadline(ctx: RuntimeContext, budgetMs: number, now: () => number = Date.now): number {
  let deadline = runDeadlines.get(ctx);
  if (deadline === undefined) {
    deadline = now() + budgetMs;
    runDeadlines.set(ctx, deadline);
  }
  return deadline;
}

/**
 * A client configured from the environment. Progress lines of the client (login, retries) go
 * to the same output as the command's own.
 */
function connect(ctx: RuntimeContext, baseUrlOverride?: string, envPrefix?: string): ApiClient {
  const config = loadConfig(ctx.env, baseUrlOverride, envPrefix, ctx.configReader);
  ctx.out.info(`credentials from ${config.credentialSource}`);
  // node:http, not undici: see ../client/node-http-sender.ts.
  return new ApiClient(
    {
      baseUrl: config.baseUrl,
      baseUrlSource: config.baseUrlSource,
      rateLimitAdvice: config.rateLimitAdvice,
      credentials: config.credentials,
      totalTimeoutMs: config.totalTimeoutMs,
      deadline: runDeadline(ctx, config.totalTimeoutMs),
      requestTimeoutMs: Math.min(30_000, config.totalTimeoutMs),
      connectTimeoutMs: Math.min(10_000, config.totalTimeoutMs),
      // A walk fetches up to 8 pages at once (pagination.ts); the catalog read runs beside it.
      connections: 8,
      logger: (line: string) => ctx.out.info(line),
    },
    openNodeHttpSender,
  );
}

/**
 * Runs `fn` with a connected client and always closes it. The close is started, not waited for:
 * nothing that follows depends on it, and the script ends its process as soon as its output is
 * flushed.
 */
export async function withClient<T>(
  ctx: RuntimeContext,
  baseUrlOverride: string | undefined,
  fn: (client: ApiClient) => Promise<T>,
  /** The account's variable prefix (see loadConfig); the default account when omitted. */
  envPrefix?: string,
): Promise<T> {
  const client = connect(ctx, baseUrlOverride, envPrefix);
  try {
    return await fn(client);
  } finally {
    client.close().catch(() => undefined);
  }
}
