import { type RunTicket, STACK_READ_MAY_RUN_AT_APPLY, STACK_READ_PLAN_TIME } from "../../protocol";
import { randomHex } from "../io/crypto";
import { sweepRunFolders } from "./run-folder";

/**
 * The start of a run, in the stack's plan-time read, before any script of the run: its ticket
 * (see RunTicket), and the removal of the run folders whose lease lapsed. The clean-up is best
 * effort: what cannot be removed is said through `warn` (the plan's check block), never failing the plan.
 */
export function startRun(env: NodeJS.ProcessEnv, query: Readonly<Record<string, string>>, warn: (line: string) => void): RunTicket {
  const ticket: RunTicket = {
    id: randomHex(16),
    planTime: query[STACK_READ_PLAN_TIME] || undefined,
    readAt: query[STACK_READ_MAY_RUN_AT_APPLY] === "true" ? undefined : Date.now(),
  };
  sweepRunFolders(env, warn);
  return ticket;
}
