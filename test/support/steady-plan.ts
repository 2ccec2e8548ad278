// What the Terraform suites mean by "steady": a plan of the applied configuration changes nothing.
import type { PlanResult, TerraformRunner } from "./terraform";

/** Plans with -detailed-exitcode and expects "No changes." and exit code 0; returns the plan. */
export async function expectSteadyPlan(tf: TerraformRunner): Promise<PlanResult> {
  const plan = await tf.plan({ detailedExitCode: true, check: true });
  expect(plan.stdout).toContain("No changes.");
  expect(plan.exitCode).toBe(0);
  return plan;
}
