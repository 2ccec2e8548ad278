import { runBudgetMsOrDefault } from "../../shared/config";

/**
 * How long the scripts of one terraform run wait for each other's locks (a name, the run's walk,
 * its session), and how long what a script holds (a lock, its run folder) lasts: its lease, by the
 * script's own budget. A live holder's lease never lapses, so no one breaks its lock or sweeps its folder.
 */

/** The shortest lease: ten minutes. */
export const MIN_LEASE_MS = 10 * 60_000;

/** How long a script waits for another one holding a lock: its run's time budget (at most an hour). */
export function lockWaitMs(env: NodeJS.ProcessEnv): number {
  return Math.min(runBudgetMsOrDefault(env), 3600_000);
}

/**
 * A script's lease: its watchdog ends it 15 s after its budget, so past the budget plus a minute it
 * holds nothing. Never less than MIN_LEASE_MS.
 */
export function leaseMs(env: NodeJS.ProcessEnv): number {
  return Math.max(MIN_LEASE_MS, runBudgetMsOrDefault(env) + 60_000);
}
