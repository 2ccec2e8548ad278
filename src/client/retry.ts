/**
 * Retry policy: every idempotent request is retried on its own, with capped exponential backoff
 * and full jitter, until the deadline (not a fixed number of attempts), honouring `Retry-After`.
 *
 * Why per request and until the deadline: parallel Terraform processes share the server's
 * failures, and a multi-request operation (a walk over pages, a create and its look-ups) that is
 * retried as one unit can never finish under a steady error rate. A request that retries alone
 * only needs one success per request.
 *
 * `Retry-After` longer than what is left of the deadline: the request fails at once with kind
 * `timeout`, saying what the server asked for. Coming back earlier than the server asked would
 * most likely be throttled again, and waiting until the deadline only to fail would waste it.
 */
import { GpuCloudError } from "./errors";

export interface RetryPolicy {
  /** Optional cap on attempts per request, the first included (default: none, the deadline bounds retries; 1 disables retries). */
  readonly maxAttempts?: number;
  /** Backoff of the first retry before jitter, in ms (default 250). */
  readonly baseDelayMs?: number;
  /** Upper bound of any backoff before jitter, in ms (default 8000). */
  readonly maxDelayMs?: number;
  /**
   * How long a request keeps retrying an API it cannot reach at all (a refused connection, a
   * host name that does not resolve, no route to the host), in ms from the first such failure
   * (default 15 000). Usually a wrong address: a few quick retries ride out a restarting server,
   * where the whole time budget would only delay the message.
   */
  readonly unreachableMs?: number;
}

export interface ResolvedRetryPolicy {
  /** `Infinity` when only the deadline bounds retries. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly unreachableMs: number;
}

export const DEFAULT_RETRY_POLICY: ResolvedRetryPolicy = {
  maxAttempts: Number.POSITIVE_INFINITY,
  baseDelayMs: 250,
  maxDelayMs: 8000,
  unreachableMs: 15_000,
};

/**
 * Network error codes of a request that never reached a server: nothing answers at the address,
 * or the address does not lead anywhere. Retried for {@link RetryPolicy.unreachableMs} only.
 */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
]);

/** True for a failure to reach the API at all (see {@link UNREACHABLE_CODES}). */
function isUnreachable(err: GpuCloudError): boolean {
  return err.httpStatus === undefined && err.code !== undefined && UNREACHABLE_CODES.has(err.code);
}

/** No attempt is started with less time than this left before the deadline. */
export const MIN_ATTEMPT_MS = 50;
/** `code` of the error for a request not sent because the deadline had (nearly) passed. */
export const DEADLINE_CODE = "DEADLINE";
/** The largest delay Node's timers accept (about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

export function resolveRetryPolicy(policy: RetryPolicy | undefined): ResolvedRetryPolicy | string {
  const maxAttempts = policy?.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts;
  const baseDelayMs = policy?.baseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs;
  const maxDelayMs = policy?.maxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs;
  const unreachableMs = policy?.unreachableMs ?? DEFAULT_RETRY_POLICY.unreachableMs;
  if (maxAttempts !== Number.POSITIVE_INFINITY && (!Number.isInteger(maxAttempts) || maxAttempts < 1)) {
    return "retry.maxAttempts must be a positive integer (or left out: the deadline bounds retries)";
  }
  if (!(baseDelayMs >= 0) || !Number.isFinite(baseDelayMs)) return "retry.baseDelayMs must be a non-negative number";
  if (!(maxDelayMs >= baseDelayMs) || !(maxDelayMs <= MAX_TIMER_MS)) {
    return `retry.maxDelayMs must be a number from retry.baseDelayMs to ${MAX_TIMER_MS}`;
  }
  if (!(unreachableMs >= 0) || !(unreachableMs <= MAX_TIMER_MS)) return `retry.unreachableMs must be a number from 0 to ${MAX_TIMER_MS}`;
  return { maxAttempts, baseDelayMs, maxDelayMs, unreachableMs };
}

/**
 * Full-jitter backoff before retry number `retry` (1 for the wait after the first attempt):
 * a uniformly random delay in [0, min(maxDelay, base * 2^(retry-1))).
 */
export function backoffDelayMs(retry: number, policy: ResolvedRetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(40, Math.max(0, retry - 1)));
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(ceiling * r);
}

/**
 * `Retry-After` as a delay in ms: delta-seconds (`"3"`, tolerantly `"1.5"`) or an HTTP date
 * (relative to `nowMs`). Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfterMs(value: string | string[] | undefined, nowMs: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (text === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** `1234` → `1.2s`, `40` → `0.04s`. */
export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  if (s >= 10) return `${Math.round(s)}s`;
  if (s >= 0.1 || s === 0) return `${Number(s.toFixed(1))}s`;
  return `${Number(s.toFixed(3))}s`;
}

/** What a retry loop needs from its client: the clock, waits, randomness, the log, the budget. */
export interface RetryEnvironment {
  readonly policy: ResolvedRetryPolicy;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
  readonly log: (line: string) => void;
  /** The whole budget, for messages (`the time budget of 120s`). */
  readonly budgetMs: number;
  /**
   * The API's address and where it came from, for the message of an API that cannot be reached
   * (`http://api.example.com (from GPUCLOUD_BASE_URL; ...)`).
   */
  readonly target?: string;
  /** Said when a request gives up while the server throttles it (HTTP 429): what the user can change. */
  readonly rateLimitAdvice?: string;
}

export interface RetryRequest {
  /** The operation that errors are reported under. */
  readonly operation: string;
  /** e.g. `GET /api-tokens`, for log lines. */
  readonly label: string;
  /** Absolute deadline (epoch ms of `now()`). */
  readonly deadline: number;
  /** Which retryable errors may be retried (default all); a create never retries an ambiguous one. */
  readonly mayRetry?: (err: GpuCloudError) => boolean;
}

/** Runs `attempt` until it succeeds, fails for good, or the deadline leaves no room for another try. */
export async function retryUntilDeadline<T>(env: RetryEnvironment, request: RetryRequest, attempt: () => Promise<T>): Promise<T> {
  const { operation, label, deadline } = request;
  const started = env.now();
  const max = env.policy.maxAttempts;
  /** When the current run of failures to reach the API began (undefined: the last failure was another). */
  let unreachableSince: number | undefined;
  let throttled = false;
  /** The advice for a request that gives up while throttled, after its message. */
  const advice = (throttledNow: boolean): string =>
    throttledNow && env.rateLimitAdvice !== undefined ? `. The API kept answering 429 (rate limited): ${env.rateLimitAdvice}` : "";
  for (let n = 1; ; n++) {
    let err: GpuCloudError;
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof GpuCloudError)) throw e;
      err = e;
    }
    const elapsed = env.now() - started;
    const own = err.operation === operation;
    const lastError = own ? err.detail : err.message;
    if (err.code === DEADLINE_CODE && own) {
      const after = n > 1 ? ` after ${n - 1} attempt${n === 2 ? "" : "s"}` : "";
      throw err.with({
        detail: `the time budget of ${formatSeconds(env.budgetMs)} is used up${after} (${err.detail})${advice(throttled)}`,
        attempts: n > 1 ? n - 1 : undefined,
      });
    }
    throttled = err.kind === "rate-limited";
    if (!err.retryable || (request.mayRetry !== undefined && !request.mayRetry(err))) {
      throw n > 1 ? err.with({ attempts: n }) : err;
    }
    if (n >= max) {
      throw err.with({
        operation,
        detail: `${lastError} (gave up after ${n} attempts in ${formatSeconds(elapsed)})${advice(throttled)}`,
        attempts: n,
      });
    }
    const delay = err.retryAfterMs ?? backoffDelayMs(n, env.policy, env.random);
    if (isUnreachable(err)) {
      unreachableSince ??= env.now();
      const spent = env.now() - unreachableSince;
      if (spent + delay > env.policy.unreachableMs) {
        throw err.with({
          operation,
          retryable: false,
          detail:
            `cannot reach the API at ${env.target ?? "its base URL"}: ${networkCodeInWords(err.code!)} on ${n} attempt${n === 1 ? "" : "s"} ` +
            `in ${formatSeconds(env.now() - started)}. Check the address (and that the API is up and reachable from here).`,
          attempts: n,
        });
      }
    } else {
      unreachableSince = undefined;
    }
    const remaining = deadline - env.now();
    if (delay + MIN_ATTEMPT_MS > remaining) {
      const asked = err.retryAfterMs !== undefined ? `; the server asked to wait ${formatSeconds(err.retryAfterMs)}` : "";
      throw err.with({
        operation,
        kind: "timeout",
        retryable: false,
        detail:
          `gave up after ${formatSeconds(elapsed)} and ${n} attempt${n === 1 ? "" : "s"}: ` +
          `the time budget of ${formatSeconds(env.budgetMs)} leaves no room for another attempt${asked}; last error: ${lastError}` +
          advice(throttled),
        attempts: n,
      });
    }
    const of = Number.isFinite(max) ? `/${max}` : "";
    // The request that failed comes first: when it is a step of this one (the log in before a
    // GET), that step is what is retried, followed by the request itself.
    const what = own ? label : `${err.operation}, then ${label},`;
    env.log(`retrying ${what} after ${reasonOf(err)} (attempt ${n + 1}${of}, waiting ${formatSeconds(delay)})`);
    await env.sleep(delay);
  }
}

/** `HTTP 502`, `a reset connection (ECONNRESET)`, `a timeout`: the short cause of a failure, for log lines. */
export function reasonOf(err: GpuCloudError): string {
  if (err.httpStatus !== undefined && (err.httpStatus < 200 || err.httpStatus >= 300)) return `HTTP ${err.httpStatus}`;
  if (err.httpStatus !== undefined) return `status false (HTTP ${err.httpStatus})`;
  if (err.code !== undefined) return err.code === "TIMEOUT" ? "a timeout" : networkCodeInWords(err.code);
  return `${err.kind === "auth" ? "an" : "a"} ${err.kind} error`;
}

/** Network error codes of Node and undici as a reader understands them; unknown codes as they are. */
const NETWORK_CODE_WORDS: Readonly<Record<string, string>> = {
  ECONNRESET: "a reset connection",
  ECONNREFUSED: "a refused connection",
  ECONNABORTED: "an aborted connection",
  EPIPE: "a broken connection",
  UND_ERR_SOCKET: "a connection closed by the other side",
  UND_ERR_CLOSED: "a closed client",
  UND_ERR_DESTROYED: "a closed client",
  UND_ERR_CONNECT_TIMEOUT: "a connect timeout",
  UND_ERR_HEADERS_TIMEOUT: "no response headers in time",
  UND_ERR_BODY_TIMEOUT: "no response body in time",
  UND_ERR_RES_EXCEEDED_MAX_SIZE: "a response too large",
  ETIMEDOUT: "a timeout",
  ENOTFOUND: "an unknown host name",
  EAI_AGAIN: "a failed host name look-up",
  EHOSTUNREACH: "an unreachable host",
  EHOSTDOWN: "an unreachable host",
  ENETUNREACH: "an unreachable network",
  ENETDOWN: "a network that is down",
  [DEADLINE_CODE]: "the end of the time budget",
};

/** `a reset connection (ECONNRESET)`: words first, the code in parentheses. */
function networkCodeInWords(code: string): string {
  const words = NETWORK_CODE_WORDS[code];
  if (words) return `${words} (${code})`;
  return /CERT|TLS|SSL/i.test(code) ? `a TLS failure (${code})` : `a network error (${code})`;
}
