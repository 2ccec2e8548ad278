import { runBudgetMsOrDefault } from "../../shared/config";

/**
 * How long the scripts of one terraform run wait for each other's locks (a name, the run's walk,
 * its session) and when they treat one as left by a dead process. The bounds follow the run's time
 * budget: a live holder's lock must never be broken, or two creates of one name run at once.
 */

/** A lock older than this was left by a process that died, whatever the budget. */
export const STALE_LOCK_MS = 10 * 60_000;

/** How long a script waits for another one holding a lock: its run's time budget (at most an hour). */
export function lockWaitMs(env: NodeJS.ProcessEnv): number {
  return Math.min(runBudgetMsOrDefault(env), 3600_000);
}

/**
 * When a lock is certainly stale: a holder of the same run (same budget) is killed by its
 * watchdog 15 s after its budget, so a lock older than the budget plus a margin has no live
 * holder. Never less than STALE_LOCK_MS.
 */
export function lockStaleAfterMs(env: NodeJS.ProcessEnv): number {
  return Math.max(STALE_LOCK_MS, runBudgetMsOrDefault(env) + 60_000);
}
