/**
 * An ApiToken whose name is only known at apply (taken from another resource's attribute), next
 * to one with a literal name, under real Terraform: the stack's read is then unknown at
 * plan, and the read after the writes must not take its count from it (Terraform refuses a
 * count it cannot know at plan: "Invalid count argument"); the one writer gets the name from the
 * plan's inputs at apply, and the literal token's key stays known in the plan.
 */
import { Resource } from "@cdktf/provider-null/lib/resource";
import { TerraformOutput, TerraformVariable } from "cdktf";

import { ApiToken } from "../../src";
import { describeWithTerraform, oneLine, outputChanges, type TerraformRunner } from "../support/terraform";
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

/** The writer's keys the plan text shows changed, one line each (`~ "c/x.name" = "a" -> (known after apply)`). */
function shownKeys(text: string): string[] {
  return [...text.matchAll(/^\s*([~+-])\s+("c\/[\w-]+\.(?:name|description|in_sync)")\s+=\s+(.*?)\s*$/gm)].map((m) =>
    oneLine(`${m[1]} ${m[2]} = ${m[3]}`),
  );
}

describeWithTerraform("ApiTokens whose props are expressions beside literal ones, under real Terraform", () => {
  const fx = terraformFixture({ users: [{ username: "given-bot", password: "given-password-5e1b" }] });
  let tf: TerraformRunner;
  const vars = (round: string, description: string) => ({ args: [`-var=round=${round}`, `-var=description=${description}`] });

  beforeAll(async () => {
    tf = await fx.stack(
      (stack) => {
        const round = new TerraformVariable(stack, "round", { type: "string" });
        const description = new TerraformVariable(stack, "description", { type: "string" });
        // Replaced whenever `round` changes: its id, and the name made of it, are unknown in that plan.
        const seed = new Resource(stack, "seed", { triggers: { round: round.stringValue } });
        const literal = new ApiToken(stack, "literal", { name: "given-literal", description: "fixed" });
        const computed = new ApiToken(stack, "computed", { name: `given-${seed.id}`, description: description.stringValue });
        new TerraformOutput(stack, "literal_id", { value: literal.tokenId });
        new TerraformOutput(stack, "computed_id", { value: computed.tokenId });
        new TerraformOutput(stack, "computed_name", { value: computed.name });
      },
      { stackId: "c", prefix: "gpucloud-given-" },
    );
    await tf.apply({ check: true, ...vars("1", "first") });
  });

  test("a name unknown at plan shows as its own key; the other token's keys and outputs stay known; the rename keeps the id", async () => {
    const before = await tf.output();
    const [computed] = fx.named(String(before.computed_name.value));
    const plan = await tf.plan({ check: true, ...vars("2", "first") });
    const text = oneLine(plan.stdout);
    expect(shownKeys(plan.stdout)).toEqual([`~ "c/computed.name" = "${computed.name}" -> (known after apply)`]);
    // Known at plan: the literal token's output does not change; the computed token's id is the ledger's.
    expect(outputChanges(plan.plan!).literal_id.actions).toEqual(["no-op"]);
    expect(outputChanges(plan.plan!).computed_id.actions).toEqual(["no-op"]);
    expect(text).not.toContain("Check block assertion known after apply");
    const applied = await tf.apply({ check: true, planFile: plan.planFile });
    const after = await tf.output();
    const name = String(after.computed_name.value);
    expect(name).not.toBe(computed.name);
    expect(oneLine(applied.stdout)).toContain(
      `API token "${computed.name}" (id ${computed.id}) for c/computed: renamed "${computed.name}" to "${name}"`,
    );
    expect(fx.named(name)).toEqual([expect.objectContaining({ id: computed.id })]);
    expect(after.computed_id.value).toBe(computed.id);
    expect((await tf.plan({ check: true, detailedExitCode: true, ...vars("2", "first") })).exitCode).toBe(0);
  });

  test("a description given as a variable shows as its own key, and the next plan is empty (the ledger's digest is Terraform's)", async () => {
    const plan = await tf.plan({ check: true, ...vars("2", "second") });
    expect(shownKeys(plan.stdout)).toEqual(['~ "c/computed.description" = "first" -> "second"']);
    await tf.apply({ check: true, planFile: plan.planFile });
    const name = String((await tf.output()).computed_name.value);
    expect(fx.named(name)[0].description).toBe("second");
    expect((await tf.plan({ check: true, detailedExitCode: true, ...vars("2", "second") })).exitCode).toBe(0);
  });

  test("drift of a token known by its ledger entry (renamed in the console) shows as its marker, and the apply renames it back", async () => {
    const name = String((await tf.output()).computed_name.value);
    const [token] = fx.named(name);
    const client = fx.client();
    await client.updateToken(token.id, { name: "given-console", description: token.description }).finally(() => client.close());
    const plan = await tf.plan({ check: true, ...vars("2", "second") });
    expect(shownKeys(plan.stdout)).toEqual(['~ "c/computed.in_sync" = "true" -> (known after apply)']);
    await tf.apply({ check: true, planFile: plan.planFile });
    expect(fx.named(name)).toEqual([expect.objectContaining({ id: token.id })]);
    expect((await tf.plan({ check: true, detailedExitCode: true, ...vars("2", "second") })).exitCode).toBe(0);
  });
});
