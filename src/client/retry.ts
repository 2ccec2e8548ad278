/** Retry policy: capped exponential backoff with full jitter, and `Retry-After` parsing. */

export interface RetryPolicy {
  /** Attempts per operation, the first included (default 5; 1 disables retries). */
  readonly maxAttempts?: number;
  /** Backoff of the first retry before jitter, in ms (default 250). */
  readonly baseDelayMs?: number;
  /** Upper bound of any backoff before jitter, in ms (default 8000). */
  readonly maxDelayMs?: number;
}

export interface ResolvedRetryPolicy {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: ResolvedRetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 8000,
};

export function resolveRetryPolicy(policy: RetryPolicy | undefined): ResolvedRetryPolicy | string {
  const maxAttempts = policy?.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts;
  const baseDelayMs = policy?.baseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs;
  const maxDelayMs = policy?.maxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 100) {
    return "retry.maxAttempts must be an integer from 1 to 100";
  }
  if (!(baseDelayMs >= 0) || !Number.isFinite(baseDelayMs)) return "retry.baseDelayMs must be a non-negative number";
  if (!(maxDelayMs >= baseDelayMs) || !Number.isFinite(maxDelayMs)) return "retry.maxDelayMs must be a number >= retry.baseDelayMs";
  return { maxAttempts, baseDelayMs, maxDelayMs };
}

/**
 * Full-jitter backoff before retry number `retry` (1 for the wait after the first attempt):
 * a uniformly random delay in [0, min(maxDelay, base * 2^(retry-1))).
 */
export function backoffDelayMs(retry: number, policy: ResolvedRetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
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
