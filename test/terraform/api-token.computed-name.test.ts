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

describeWithTerraform("a new ApiToken takes the name a token given by an expression leaves, under real Terraform", () => {
  const fx = terraformFixture({ users: [{ username: "takeover-bot", password: "takeover-password-0c3d" }] });

  test("the renamed token keeps its id; the new one gets a token of its own; the next plan is empty", async () => {
    const folder = fx.folder({ prefix: "gpucloud-takeover-" });
    const synth = (withNew: boolean) =>
      folder.synth((stack) => {
        const name = new TerraformVariable(stack, "name", { type: "string" });
        const moved = new ApiToken(stack, "moved", { name: name.stringValue });
        new TerraformOutput(stack, "moved_id", { value: moved.tokenId });
        if (withNew) {
          const fresh = new ApiToken(stack, "fresh", { name: "takeover-a" });
          new TerraformOutput(stack, "fresh_id", { value: fresh.tokenId });
        }
      });
    synth(false);
    const tf = await fx.init(folder.dir);
    await tf.apply({ check: true, args: ["-var=name=takeover-a"] });
    const [first] = fx.named("takeover-a");
    // One change: the expression's value moves on to another name, and a new ApiToken takes the old one.
    synth(true);
    const plan = await tf.plan({ check: true, args: ["-var=name=takeover-b"] });
    expect(oneLine(plan.stdout)).not.toContain("Warning");
    await tf.apply({ check: true, planFile: plan.planFile });
    const outputs = await tf.output();
    expect(outputs.moved_id.value).toBe(first.id);
    expect(fx.named("takeover-b")).toEqual([expect.objectContaining({ id: first.id })]);
    const [fresh] = fx.named("takeover-a");
    expect(fresh.id).not.toBe(first.id);
    expect(outputs.fresh_id.value).toBe(fresh.id);
    expect((await tf.plan({ check: true, detailedExitCode: true, args: ["-var=name=takeover-b"] })).exitCode).toBe(0);
  });
});

describeWithTerraform("an ApiToken whose description alone is an expression, under real Terraform", () => {
  const fx = terraformFixture({ users: [{ username: "describe-bot", password: "describe-password-8f2e" }] });

  test("adopted by name at plan (its id known), its description written; a new value shows as its own key; steady after", async () => {
    const existing = fx.emulator.addToken({ name: "described", description: "made in the console" });
    const tf = await fx.stack(
      (stack) => {
        const description = new TerraformVariable(stack, "description", { type: "string" });
        const token = new ApiToken(stack, "t", { name: "described", description: description.stringValue });
        new TerraformOutput(stack, "id", { value: token.tokenId });
      },
      { stackId: "d", prefix: "gpucloud-described-" },
    );
    const first = await tf.plan({ check: true, args: ["-var=description=one"] });
    // Found by its literal name at plan: its id is known there.
    expect(outputChanges(first.plan!).id.after).toBe(existing.id);
    await tf.apply({ check: true, planFile: first.planFile });
    expect(fx.named("described")).toEqual([expect.objectContaining({ id: existing.id, description: "one" })]);
    expect((await tf.plan({ check: true, detailedExitCode: true, args: ["-var=description=one"] })).exitCode).toBe(0);
    const second = await tf.plan({ check: true, args: ["-var=description=two"] });
    expect(oneLine(second.stdout)).toContain('~ "d/t.description" = "one" -> "two"');
    expect(oneLine(second.stdout)).not.toContain("d/t.in_sync");
    await tf.apply({ check: true, planFile: second.planFile });
    expect(fx.named("described")).toEqual([expect.objectContaining({ id: existing.id, description: "two" })]);
    expect((await tf.plan({ check: true, detailedExitCode: true, args: ["-var=description=two"] })).exitCode).toBe(0);
  });
});
