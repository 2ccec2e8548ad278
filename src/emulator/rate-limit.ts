/**
 * The optional rate limits (EmulatorOptions.rateLimit): requests per second and logins per minute,
 * per user or API token, over sliding windows; over a limit, a 429 with Retry-After.
 */
import { HttpError } from "./http";
import type { EmulatorRateLimit } from "./types";
import { checkPositiveInt } from "./validation";

export class RateLimiter {
  private readonly rateLimit: EmulatorRateLimit;
  /** Per user (or API token): when its requests, and its logins, were accepted (ms, ascending). */
  private readonly requestTimes = new Map<string, number[]>();
  private readonly loginTimes = new Map<string, number[]>();

  /** `onThrottled` is told of each request refused, for the stats. */
  constructor(
    rateLimit: EmulatorRateLimit | undefined,
    private readonly now: () => number,
    private readonly onThrottled: () => void,
  ) {
    this.rateLimit = { ...rateLimit };
    for (const [name, value] of Object.entries(this.rateLimit)) {
      if (value !== undefined) checkPositiveInt(`rateLimit.${name}`, value as number);
    }
  }

  /** Counts a request of `who` (a user, or an API token) against requestsPerSecond. */
  request(who: string): void {
    this.throttle(this.requestTimes, who, this.rateLimit.requestsPerSecond, 1000, "requests per second");
  }

  /** Counts a login of `who` against loginsPerMinute. */
  login(who: string): void {
    this.throttle(this.loginTimes, who, this.rateLimit.loginsPerMinute, 60_000, "logins per minute");
  }

  /**
   * Counts one request of `who` against a sliding window of `windowMs` holding at most `limit`;
   * over the limit, a 429 whose Retry-After is the whole seconds until the window has room.
   */
  private throttle(times: Map<string, number[]>, who: string, limit: number | undefined, windowMs: number, what: string): void {
    if (limit === undefined) return;
    const now = this.now();
    const recent = (times.get(who) ?? []).filter((t) => t > now - windowMs);
    if (recent.length >= limit) {
      times.set(who, recent);
      this.onThrottled();
      const wait = Math.max(1, Math.ceil((recent[0]! + windowMs - now) / 1000));
      throw new HttpError(429, `rate limit exceeded: at most ${limit} ${what} per user; retry after ${wait} s`, {
        "retry-after": String(wait),
      });
    }
    recent.push(now);
    times.set(who, recent);
  }
}
