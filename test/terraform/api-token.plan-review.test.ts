/**
 * What a reviewer reads in a plan, under real Terraform (offline, provider doubles) against the
 * emulator, with a consumer of each token's tokenId and token (a terraform_data, as a secret
 * store's resource would be): everyday changes replace only the token's own sync resource and
 * keep tokenId and token known, an ordinary plan and apply print no false warning, an update
 * whose token vanished after the plan fails its apply, and removing ApiTokens warns, naming them.
 * Also: a lookup matching nothing does not stop a `-target` plan of a token, the read's errors name
 * every construct they concern.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

import { DataResource, type TerraformStack } from "cdktf";

import { ApiToken, type ApiTokenProps, Flavors } from "../../src";
import { withoutNodeLineWarning } from "../support/processes";
import type { SynthFolder } from "../support/synth-folder";
import { describeWithTerraform, oneLine, type PlanJson, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "plan-review-bot", password: "plan-review-pw-7d21" };

/** Addresses whose planned actions are not a no-op, with the actions; cdktf's hash suffixes (`_3B2F1A2D`) left out. */
function changes(plan: PlanJson | undefined): Record<string, string[]> {
  return Object.fromEntries(
    (plan?.resource_changes ?? [])
      .filter((rc) => rc.change.actions.join() !== "no-op")
      .map((rc) => [rc.address.replace(/_[0-9A-F]{8}\b/, ""), rc.change.actions]),
  );
}

describeWithTerraform("plans a reviewer can trust, under real Terraform", () => {
  const fx = terraformFixture({ users: [USER] });
  let folder: SynthFolder;
  let tf: TerraformRunner;

  /** The stack: each token with a consumer of its tokenId and token; a lookup unless `lookup` is false. */
  const synth = (tokens: Record<string, ApiTokenProps>, lookup = true) =>
    folder.synth((stack) => {
      for (const [id, props] of Object.entries(tokens)) {
        const token = new ApiToken(stack, id, props);
        new DataResource(stack, `${id}-uses`, { input: { id: token.tokenId, token: token.token } });
      }
      if (lookup) new Flavors(stack, "gpus", { regionId: "norway-east-1", gpu: "H100" });
    });
  const byName = (name: string) => fx.named(name);
  const consumerInput = async (id: string) => {
    const state = await tf.show();
    const consumer = (state.values?.root_module?.resources ?? []).find((r) => r.address === `terraform_data.${id}-uses`);
    return consumer?.values.input as { id: string; token: string } | undefined;
  };

  beforeAll(async () => {
    folder = fx.folder({ prefix: "gpucloud-plan-review-" });
    synth({ a: { name: "review-a", description: "v1" }, b: { name: "review-b" } });
    tf = await fx.init(folder.dir);
  });

  let aId: string;
  let aValue: string;

  test("first apply: the tokens, their consumers and the stack's roster; nothing warns", async () => {
    const plan = await tf.plan({ check: true });
    expect(changes(plan.plan)).toEqual({
      "null_resource.gpucloud_a_sync": ["create"],
      "null_resource.gpucloud_b_sync": ["create"],
      "terraform_data.a-uses": ["create"],
      "terraform_data.b-uses": ["create"],
      "terraform_data.gpucloud_token_roster[0]": ["create"],
      "data.external.gpucloud-stack-read_after-write[0]": ["read"],
    });
    // The roster holds names, not ids: known in the plan, though both tokens' ids are not.
    const roster = plan.plan?.resource_changes?.find((c) => c.address === "terraform_data.gpucloud_token_roster[0]")?.change;
    expect(roster?.after_unknown).not.toHaveProperty("input");
    expect(JSON.parse((roster?.after as { input: string }).input)).toEqual({ "s/a": { name: "review-a" }, "s/b": { name: "review-b" } });
    const applied = await tf.apply({ check: true, planFile: plan.planFile });
    expect(withoutNodeLineWarning(applied.stdout)).not.toContain("WARNING");
    [{ id: aId, token: aValue }] = byName("review-a");
    expect(await consumerInput("a")).toEqual({ id: aId, token: aValue });
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test.each([
    ["a description change", { name: "review-a", description: "v2" }, {}],
    // The roster's input holds each token's name: a rename is one in-place update of it.
    [
      "a rename with previousNames",
      { name: "review-a2", description: "v2", previousNames: ["review-a"] },
      { "terraform_data.gpucloud_token_roster[0]": ["update"] },
    ],
  ])("%s replaces only the token's sync resource: tokenId and token stay known, no false warning", async (_what, props, roster) => {
    synth({ a: props, b: { name: "review-b" } });
    const plan = await tf.plan({ check: true });
    expect(changes(plan.plan)).toEqual({ "null_resource.gpucloud_a_sync": ["delete", "create"], ...roster });
    const text = oneLine(`${plan.stdout}${plan.stderr}`);
    expect(text).not.toContain("Check block assertion known after apply");
    expect(text).not.toContain("Warning:");
    const applied = await tf.apply({ check: true, planFile: plan.planFile });
    expect(withoutNodeLineWarning(applied.stdout)).not.toContain("WARNING");
    expect(applied.stdout).not.toContain("ACTIVE");
    expect(oneLine(applied.stdout)).toContain(`released API token "review-a" (id ${aId}) to the resource that replaces this one, if any`);
    expect(fx.emulator.tokens().filter((t) => t.id === aId)).toEqual([
      expect.objectContaining({ name: props.name, description: "v2", token: aValue }),
    ]);
    expect(await consumerInput("a")).toEqual({ id: aId, token: aValue });
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("an update whose token was revoked after the plan fails its apply: no token is created, the consumer keeps its input", async () => {
    synth({ a: { name: "review-a2", description: "v3", previousNames: ["review-a"] }, b: { name: "review-b" } });
    const plan = await tf.plan({ check: true });
    expect(changes(plan.plan)).toEqual({ "null_resource.gpucloud_a_sync": ["delete", "create"] });
    expect(fx.emulator.deleteToken(aId)).toBe(true);
    const before = fx.emulator.tokens().length;
    const applied = await tf.apply({ planFile: plan.planFile });
    expect(applied.exitCode).not.toBe(0);
    expect(oneLine(applied.stderr)).toContain(
      `the plan showed API token id ${aId} for "review-a2" (the ApiToken "s/a"), the id its consumers were planned with, but no such token exists any more`,
    );
    expect(fx.emulator.tokens()).toHaveLength(before);
    expect(await consumerInput("a")).toEqual({ id: aId, token: aValue });

    // The next plan knows: a create (of the sync the failed provisioner tainted), whose id is known only after apply.
    // The roster holds names, not ids: it stays as it is.
    const again = await tf.plan({ check: true });
    expect(changes(again.plan)).toEqual({
      "null_resource.gpucloud_a_sync": ["delete", "create"],
      "terraform_data.a-uses": ["update"],
      "data.external.gpucloud-stack-read_after-write[0]": ["read"],
    });
    await tf.apply({ check: true, planFile: again.planFile });
    const [created] = byName("review-a2");
    expect(created.id).not.toBe(aId);
    expect(await consumerInput("a")).toEqual({ id: created.id, token: created.token });
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("removing an ApiToken warns in the plan the reviewer approves and at apply, naming its name, id and account: it stays ACTIVE", async () => {
    const [b] = byName("review-b");
    synth({ a: { name: "review-a2", description: "v3", previousNames: ["review-a"] } });
    const plan = await tf.plan({ check: true });
    expect(changes(plan.plan)).toEqual({
      "null_resource.gpucloud_b_sync": ["delete"],
      "terraform_data.b-uses": ["delete"],
      "terraform_data.gpucloud_token_roster[0]": ["delete", "create"],
    });
    // From the state's ledger: on a fresh runner too.
    expect(oneLine(plan.stdout)).toContain(
      `API token "review-b" (id ${b.id}) on user plan-review-bot at ${fx.emulator.url.replace(/\/+$/, "")} (account GPUCLOUD_*) stays ACTIVE: ` +
        `the ApiToken "s/b" is no longer in the stack`,
    );
    const applied = await tf.apply({ check: true, planFile: plan.planFile });
    const log = oneLine(applied.stdout);
    expect(log).toContain(
      `WARNING: API token "review-b" on the account GPUCLOUD_* stays ACTIVE: the ApiToken "s/b" was removed from the stack, and the GPU cloud API has no delete operation.`,
    );
    expect(withoutNodeLineWarning(log).match(/WARNING/g)).toHaveLength(1);
    expect(byName("review-b")).toEqual([expect.objectContaining({ id: b.id })]);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("removing the stack's last ApiToken (a lookup remains) warns too", async () => {
    const [a] = byName("review-a2");
    synth({});
    const plan = await tf.plan({ check: true });
    expect(changes(plan.plan)).toEqual({
      "null_resource.gpucloud_a_sync": ["delete"],
      "terraform_data.a-uses": ["delete"],
      "terraform_data.gpucloud_token_roster[0]": ["delete"],
    });
    const applied = await tf.apply({ check: true, planFile: plan.planFile });
    expect(oneLine(applied.stdout)).toContain(
      `WARNING: API token "review-a2" on the account GPUCLOUD_* stays ACTIVE: the ApiToken "s/a" was removed from the stack`,
    );
    expect(byName("review-a2")).toEqual([expect.objectContaining({ id: a.id })]);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  /** A token with a consumer, and a lookup that matches nothing (or another). */
  const lookupStack = (gpu: string) => (stack: TerraformStack) => {
    const token = new ApiToken(stack, "t", { name: "review-target" });
    new DataResource(stack, "t-uses", { input: { id: token.tokenId } });
    new Flavors(stack, "none", { regionId: "canada-central-1", gpu });
  };

  test("a lookup that matches nothing fails the plan with its own message, but not a plan of a token's sync (-target)", async () => {
    const stackTf = await fx.stack(lookupStack("H100"), { prefix: "gpucloud-plan-review-target-" });
    const full = await stackTf.plan();
    expect(full.exitCode).toBe(1);
    const message = oneLine(full.stderr);
    expect(message).toContain("Resource precondition failed");
    expect(message).toContain('Flavors "s/none": no flavor matches (region id canada-central-1, gpu H100). region "Canada Central"');

    const state = JSON.parse(readFileSync(path.join(stackTf.dir, "cdk.tf.json"), "utf8"));
    const sync = Object.keys(state.resource.null_resource)[0];
    const targeted = await stackTf.plan({ args: [`-target=null_resource.${sync}`] });
    expect(targeted.stderr).not.toContain("Error");
    expect(targeted.exitCode).toBe(0);
    expect(changes(targeted.plan)).toMatchObject({ "null_resource.gpucloud_t_sync": ["create"] });
  });

  test("an account's error names every construct of the stack's read, the ApiTokens included", async () => {
    const stackTf = await fx.stack(lookupStack("A100"), { env: fx.env({ GPUCLOUD_PASSWORD: "" }), prefix: "gpucloud-plan-review-names-" });
    const plan = await stackTf.plan();
    expect(plan.exitCode).toBe(1);
    const message = oneLine(plan.stderr);
    expect(message).toContain("GPUCLOUD_USERNAME is set but no password");
    expect(message).toContain('(read for ApiToken "s/t", Flavors "s/none")');
  });
});
