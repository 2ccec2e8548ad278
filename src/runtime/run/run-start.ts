import { type RunTicket, STACK_READ_MAY_RUN_AT_APPLY, STACK_READ_PLAN_TIME } from "../../protocol";
import { randomHex } from "../io/crypto";
import { handoffsOfPlanTime } from "../records/handoff";
import { sweepRunFolders } from "./run-folder";

/**
 * The start of a run, in the stack's plan-time read, before any script of the run: its ticket (see
 * RunTicket; the accounts the plan reads are added once it has read them), and the removal of the
 * run folders whose lease lapsed. The clean-up is best effort: what cannot be removed is said through
 * `warn` (the plan's check block), never failing the plan.
 */
export function startRun(
  ctx: { readonly env: NodeJS.ProcessEnv; readonly cwd: string },
  workspace: string,
  query: Readonly<Record<string, string>>,
  warn: (line: string) => void,
): RunTicket {
  const planTime = query[STACK_READ_PLAN_TIME] || undefined;
  // Run during the apply, the read would find its own run's hand-offs: then the plan time alone tells runs apart.
  const atPlan = query[STACK_READ_MAY_RUN_AT_APPLY] !== "true";
  const earlier = planTime !== undefined && atPlan ? handoffsOfPlanTime(ctx.cwd, workspace, planTime) : undefined;
  sweepRunFolders(ctx.env, warn);
  return { id: randomHex(16), planTime, earlier };
}
