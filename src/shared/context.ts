import { ApiClient } from "../client/client";
import type { Credentials } from "../client/credentials";
import { openNodeHttpSender } from "../client/node-http-sender";
import type { SessionStore } from "../client/session";
import { DEFAULT_ENV_PREFIX, type RunTicket } from "../protocol";
import { type ConfigReader, loadConfig } from "./config";
import type { Output } from "./output";

/** What a command needs from the world; tests build one in-process. */
export interface RuntimeContext {
  readonly env: NodeJS.ProcessEnv;
  /** Terraform's working directory (the stack folder). */
  readonly cwd: string;
  readonly out: Output;
  /** The ticket of the terraform run this command belongs to, when it has one (see RunTicket). */
  readonly ticket?: RunTicket;
  /**
   * Where the scripts of one run share one login per account (the script sets it; the CLI does
   * not): given the run's ticket, the API's base URL, the account's variable prefix and its credentials.
   */
  readonly sessionStore?: (ticket: RunTicket, baseUrl: string, envPrefix: string, credentials: Credentials) => SessionStore;
  /** Who reads the configuration, for its messages (the CLI sets it; the script's is the default). */
  readonly configReader?: ConfigReader;
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
      sessionStore:
        ctx.ticket !== undefined && ctx.sessionStore
          ? ctx.sessionStore(ctx.ticket, config.baseUrl, envPrefix ?? DEFAULT_ENV_PREFIX, config.credentials)
          : undefined,
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
