/**
 * An ApiToken whose name is only known at apply (taken from another resource's attribute), next
 * to one with a literal name, under real Terraform: the stack's read is then unknown at
 * plan, and the read after the writes must not take its count from it (Terraform refuses a
 * count it cannot know at plan: "Invalid count argument"); the one writer gets the name from the
 * plan's inputs at apply, and the literal token's key stays known in the plan.
 */
import { Resource } from "@cdktf/provider-null/lib/resource";
import { TerraformOutput } from "cdktf";

import { ApiToken } from "../../src";
import { describeWithTerraform, oneLine, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "computed-bot", password: "computed-password-7d2a" };

describeWithTerraform("ApiToken with a name known only at apply, under real Terraform", () => {
  const fx = terraformFixture({ users: [USER] });
  let tf: TerraformRunner;

  beforeAll(async () => {
    tf = await fx.stack(
      (stack) => {
        const seed = new Resource(stack, "seed", {});
        new ApiToken(stack, "literal", { name: "literal-name" });
        const computed = new ApiToken(stack, "computed", { name: `ci-${seed.id}` });
        new TerraformOutput(stack, "computed_id", { value: computed.tokenId });
        new TerraformOutput(stack, "computed_name", { value: computed.name });
      },
      { stackId: "computed", prefix: "gpucloud-computed-name-" },
    );
  });

  test("the first plan and apply succeed, the token is created with the computed name, and the next plan is empty", async () => {
    const plan = await tf.plan({});
    expect(plan.stderr).not.toMatch(/Invalid count argument/);
    expect(plan.exitCode).toBe(0);
    // The writer's keys: the literal name is known at plan, the computed one only at apply.
    const text = oneLine(plan.stdout);
    expect(text).toContain('+ "computed/literal.name" = "literal-name"');
    expect(text).toContain('+ "computed/computed.name" = (known after apply)');
    const applied = await tf.apply({ check: true, planFile: plan.planFile });

    const outputs = await tf.output();
    const name = String(outputs.computed_name.value);
    expect(name).toMatch(/^ci-\d+$/);
    const made = fx.named(name);
    expect(made).toHaveLength(1);
    expect(outputs.computed_id.value).toBe(made[0].id);
    expect(fx.named("literal-name")).toHaveLength(1);
    // One writer made both: the name the plan could not know reached it from the plan's inputs.
    const log = oneLine(applied.stdout);
    expect(log).toContain(`created API token "${name}" (id ${made[0].id}) for computed/computed`);
    expect(log).toContain(`created API token "literal-name" (id ${fx.named("literal-name")[0].id}) for computed/literal`);
    expect(log).toContain("gpucloud: 2 of 2 tokens written");

    const again = await tf.plan({ check: true, detailedExitCode: true });
    expect(again.exitCode).toBe(0);
  });
});
