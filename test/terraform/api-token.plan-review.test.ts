/**
 * What a reviewer reads in a plan, under real Terraform (offline, provider doubles) against the
 * emulator, with a consumer of each token's tokenId and token (a terraform_data, as a secret
 * store's resource would be): the stack's one token writer holds every token's fields under
 * `<construct path>.<field>`, so an everyday change shows only itself (one token's description is
 * one changed key, the others hidden) and keeps tokenId and token known; an ordinary plan and apply
 * print no false warning; an update whose token vanished after the plan fails its apply naming it,
 * and the next plan shows that token's key again; removing ApiTokens shows their keys removed and
 * warns, naming them. Also: a lookup matching nothing does not stop a `-target` plan of the writer,
 * the read's errors name every construct they concern.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

import { DataResource, type TerraformStack } from "cdktf";

import { ApiToken, type ApiTokenProps, Flavors } from "../../src";
import { withoutNodeLineWarning } from "../support/processes";
import type { SynthFolder } from "../support/synth-folder";
import { describeWithTerraform, oneLine, outputChanges, type PlanJson, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "plan-review-bot", password: "plan-review-pw-7d21" };
const WRITER = "null_resource.gpucloud_token_writer";
const AFTER_WRITE = "data.external.gpucloud-stack-read_after-write[0]";

/** Addresses whose planned actions are not a no-op, with the actions; cdktf's hash suffixes (`_3B2F1A2D`) left out. */
function changes(plan: PlanJson | undefined): Record<string, string[]> {
  return Object.fromEntries(
    (plan?.resource_changes ?? [])
      .filter((rc) => rc.change.actions.join() !== "no-op")
      .map((rc) => [rc.address.replace(/_[0-9A-F]{8}\b/, ""), rc.change.actions]),
  );
}

/**
 * The writer's trigger lines the plan text shows (`~ "s/a.description" = "v1" -> "v2"`), whitespace
 * collapsed: what a reviewer reads of the tokens' fields; unchanged keys are hidden, so absent.
 */
function shownKeys(text: string): string[] {
  return [...text.matchAll(/^\s*([~+-])\s+("s\/[\w-]+\.(?:name|description|in_sync)")\s+=\s+(.*?)\s*$/gm)].map((m) =>
    oneLine(`${m[1]} ${m[2]} = ${m[3]}`),
  );
}

/** The "# (N unchanged elements hidden)" count of the writer's triggers in the plan text. */
function hiddenKeys(text: string): number | undefined {
  const block = /resource "null_resource" "gpucloud_token_writer" \{[\s\S]*?\n {4}\}/.exec(text)?.[0] ?? "";
  const hidden = /# \((\d+) unchanged elements? hidden\)/.exec(block);
  return hidden === null ? undefined : Number(hidden[1]);
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

  test("first apply: one writer holding both tokens' keys, their consumers and the stack's roster; nothing warns", async () => {
    const plan = await tf.plan({ check: true });
    expect(changes(plan.plan)).toEqual({
      [WRITER]: ["create"],
      "terraform_data.a-uses": ["create"],
      "terraform_data.b-uses": ["create"],
      "terraform_data.gpucloud_token_roster[0]": ["create"],
      [AFTER_WRITE]: ["read"],
    });
    // Each token's fields under its path; the drift markers are unknown until the tokens exist.
    expect(shownKeys(plan.stdout).sort()).toEqual([
      '+ "s/a.description" = "v1"',
      '+ "s/a.in_sync" = (known after apply)',
      '+ "s/a.name" = "review-a"',
      '+ "s/b.in_sync" = (known after apply)',
      '+ "s/b.name" = "review-b"',
    ]);
    // The roster holds names, not ids: known in the plan, though both tokens' ids are not.
    const roster = plan.plan?.resource_changes?.find((c) => c.address === "terraform_data.gpucloud_token_roster[0]")?.change;
    expect(roster?.after_unknown).not.toHaveProperty("input");
    expect(JSON.parse((roster?.after as { input: string }).input)).toEqual({ "s/a": { name: "review-a" }, "s/b": { name: "review-b" } });
    const applied = await tf.apply({ check: true, planFile: plan.planFile });
    expect(withoutNodeLineWarning(applied.stdout)).not.toContain("WARNING");
    [{ id: aId, token: aValue }] = byName("review-a");
    const [b] = byName("review-b");
    const log = oneLine(applied.stdout);
    expect(log).toContain(`created API token "review-a" (id ${aId}) for s/a`);
    expect(log).toContain(`created API token "review-b" (id ${b.id}) for s/b`);
    expect(log).toContain("gpucloud: 2 of 2 tokens written");
    expect(await consumerInput("a")).toEqual({ id: aId, token: aValue });
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  // The drift marker compares the API with the ledger (what the last apply wrote), not with the configuration.
  test("a description change shows exactly its own key of the writer, no drift marker", async () => {
    synth({ a: { name: "review-a", description: "v2" }, b: { name: "review-b" } });
    const plan = await tf.plan({ check: true });
    expect(shownKeys(plan.stdout)).toEqual(['~ "s/a.description" = "v1" -> "v2"']);
  });

  test.each([
    ["a description change", { name: "review-a", description: "v2" }, '~ "s/a.description" = "v1" -> "v2"', "updated the description", {}],
    // The roster's input holds each token's name: a rename is one in-place update of it.
    [
      "a rename with previousNames",
      { name: "review-a2", description: "v2", previousNames: ["review-a"] },
      '~ "s/a.name" = "review-a" -> "review-a2"',
      'renamed "review-a" to "review-a2"',
      { "terraform_data.gpucloud_token_roster[0]": ["update"] },
    ],
  ])(
    "%s shows only its token's keys of the writer: tokenId and token stay known, only that token is written, no false warning",
    async (_what, props, key, did, roster) => {
      synth({ a: props, b: { name: "review-b" } });
      const plan = await tf.plan({ check: true });
      // No read after the writes: every token has its id at plan.
      expect(changes(plan.plan)).toEqual({ [WRITER]: ["delete", "create"], ...roster });
      // That key alone: s/a's other two keys and s/b's two hidden.
      expect(shownKeys(plan.stdout)).toEqual([key]);
      expect(hiddenKeys(plan.stdout)).toBe(4);
      const text = oneLine(`${plan.stdout}${plan.stderr}`);
      expect(text).not.toContain("Check block assertion known after apply");
      expect(text).not.toContain("Warning:");
      fx.emulator.resetStats();
      const applied = await tf.apply({ check: true, planFile: plan.planFile });
      expect(withoutNodeLineWarning(applied.stdout)).not.toContain("WARNING");
      expect(applied.stdout).not.toContain("ACTIVE");
      const log = oneLine(applied.stdout);
      expect(log).toContain(`API token "review-a" (id ${aId}) for s/a: ${did}`);
      expect(log).toContain("gpucloud: 1 of 1 tokens written");
      expect(log).not.toContain("for s/b");
      expect(fx.emulator.stats().tokenWrites).toBe(1);
      expect(fx.emulator.tokens().filter((t) => t.id === aId)).toEqual([
        expect.objectContaining({ name: props.name, description: "v2", token: aValue }),
      ]);
      expect(await consumerInput("a")).toEqual({ id: aId, token: aValue });
      expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
    },
  );

  test("an update whose token was revoked after the plan fails its apply naming it: no token is created, the other is written, the next plan shows its key", async () => {
    synth({ a: { name: "review-a2", description: "v3", previousNames: ["review-a"] }, b: { name: "review-b", description: "b2" } });
    const plan = await tf.plan({ check: true });
    expect(changes(plan.plan)).toEqual({ [WRITER]: ["delete", "create"] });
    expect(shownKeys(plan.stdout).sort()).toEqual(['+ "s/b.description" = "b2"', '~ "s/a.description" = "v2" -> "v3"'].sort());
    expect(fx.emulator.deleteToken(aId)).toBe(true);
    const [b] = byName("review-b");
    const before = fx.emulator.tokens().length;
    const applied = await tf.apply({ planFile: plan.planFile });
    expect(applied.exitCode).not.toBe(0);
    const said = oneLine(applied.stderr);
    expect(said).toContain("1 of 2 API tokens were not written (every other one was)");
    expect(said).toContain(
      `s/a ("review-a2"): the plan showed API token id ${aId} for "review-a2", the id its consumers were planned with, but ` +
        "the API no longer lists it (revoked since the plan, or on another account); nothing was written for it: run terraform plan again",
    );
    expect(oneLine(applied.stdout)).toContain(`API token "review-b" (id ${b.id}) for s/b: updated the description`);
    expect(fx.emulator.tokens()).toHaveLength(before);
    expect(byName("review-b")).toEqual([expect.objectContaining({ id: b.id, description: "b2" })]);
    expect(await consumerInput("a")).toEqual({ id: aId, token: aValue });

    // The next plan knows: the writer (tainted by its failed provisioner) is replaced, the failed token's
    // drift marker is its one changed key, and its id is known only after apply. The roster holds names, not ids: it stays.
    const again = await tf.plan({ check: true });
    expect(again.stdout).toContain(`${WRITER} is tainted, so must be replaced`);
    expect(changes(again.plan)).toEqual({
      [WRITER]: ["delete", "create"],
      "terraform_data.a-uses": ["update"],
      [AFTER_WRITE]: ["read"],
    });
    expect(shownKeys(again.stdout)).toEqual(['~ "s/a.in_sync" = "true" -> (known after apply)']);
    await tf.apply({ check: true, planFile: again.planFile });
    const [created] = byName("review-a2");
    expect(created.id).not.toBe(aId);
    expect(byName("review-b")).toEqual([expect.objectContaining({ id: b.id })]);
    expect(await consumerInput("a")).toEqual({ id: created.id, token: created.token });
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("removing an ApiToken shows its keys removed and warns in the plan the reviewer approves and at apply, naming its name, id and account: it stays ACTIVE", async () => {
    const [b] = byName("review-b");
    synth({ a: { name: "review-a2", description: "v3", previousNames: ["review-a"] } });
    const plan = await tf.plan({ check: true });
    expect(changes(plan.plan)).toEqual({
      [WRITER]: ["delete", "create"],
      "terraform_data.b-uses": ["delete"],
      "terraform_data.gpucloud_token_roster[0]": ["delete", "create"],
    });
    expect(shownKeys(plan.stdout).sort()).toEqual([
      '- "s/b.description" = "b2" -> null',
      '- "s/b.in_sync" = "true" -> null',
      '- "s/b.name" = "review-b" -> null',
    ]);
    // From the state's ledger: on a fresh runner too.
    expect(oneLine(plan.stdout)).toContain(
      `API token "review-b" (id ${b.id}) on user plan-review-bot at ${fx.emulator.url.replace(/\/+$/, "")} (account GPUCLOUD_*) stays ACTIVE: ` +
        `the ApiToken "s/b" is no longer in the stack`,
    );
    fx.emulator.resetStats();
    const applied = await tf.apply({ check: true, planFile: plan.planFile });
    const log = oneLine(applied.stdout);
    expect(log).toContain(
      `WARNING: API token "review-b" on the account GPUCLOUD_* stays ACTIVE: the ApiToken "s/b" was removed from the stack, and the GPU cloud API has no delete operation.`,
    );
    expect(withoutNodeLineWarning(log).match(/WARNING/g)).toHaveLength(1);
    // The writer ran again for the one token left, in sync: nothing written.
    expect(fx.emulator.stats().tokenWrites).toBe(0);
    expect(byName("review-b")).toEqual([expect.objectContaining({ id: b.id })]);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  // The writer goes (a stack of lookups alone needs no null provider); the ledger stays, so the plan says it.
  test("removing the stack's last ApiToken (a lookup remains) warns in the plan and at apply; the ledger stays, empty", async () => {
    const [a] = byName("review-a2");
    synth({});
    const plan = await tf.plan({ check: true });
    expect(oneLine(plan.stdout)).toContain(
      `API token "review-a2" (id ${a.id}) on user plan-review-bot at ${fx.emulator.url.replace(/\/+$/, "")} (account GPUCLOUD_*) stays ACTIVE`,
    );
    expect(outputChanges(plan.plan!).gpucloud_token_ledger.actions).toEqual(["update"]);
    expect(changes(plan.plan)).toEqual({
      [WRITER]: ["delete"],
      "terraform_data.a-uses": ["delete"],
      "terraform_data.gpucloud_token_roster[0]": ["delete"],
    });
    expect(shownKeys(plan.stdout).sort()).toEqual(['- "s/a.description" = "v3"', '- "s/a.in_sync" = "true"', '- "s/a.name" = "review-a2"']);
    const applied = await tf.apply({ check: true, planFile: plan.planFile });
    expect(oneLine(applied.stdout)).toContain(
      `WARNING: API token "review-a2" on the account GPUCLOUD_* stays ACTIVE: the ApiToken "s/a" was removed from the stack`,
    );
    expect(byName("review-a2")).toEqual([expect.objectContaining({ id: a.id })]);
    expect(JSON.parse((await tf.output()).gpucloud_token_ledger.value as string)).toEqual({ a: {}, t: {}, v: 1 });
    const steady = await tf.plan({ detailedExitCode: true });
    expect(steady.exitCode).toBe(0);
    expect(steady.stdout).not.toContain("ACTIVE");
  });

  /** A token with a consumer, and a lookup that matches nothing (or another). */
  const lookupStack = (gpu: string) => (stack: TerraformStack) => {
    const token = new ApiToken(stack, "t", { name: "review-target" });
    new DataResource(stack, "t-uses", { input: { id: token.tokenId } });
    new Flavors(stack, "none", { regionId: "canada-central-1", gpu });
  };

  test("a lookup that matches nothing fails the plan with its own message, but not a plan of the token writer (-target)", async () => {
    const stackTf = await fx.stack(lookupStack("H100"), { prefix: "gpucloud-plan-review-target-" });
    const full = await stackTf.plan();
    expect(full.exitCode).toBe(1);
    const message = oneLine(full.stderr);
    expect(message).toContain("Resource precondition failed");
    expect(message).toContain('Flavors "s/none": no flavor matches (region id canada-central-1, gpu H100). region "Canada Central"');

    // The stack's one null_resource is its token writer: every token's write goes through it.
    const synthesized = JSON.parse(readFileSync(path.join(stackTf.dir, "cdk.tf.json"), "utf8"));
    expect(Object.keys(synthesized.resource.null_resource)).toEqual(["gpucloud_token_writer"]);
    const targeted = await stackTf.plan({ args: [`-target=${WRITER}`] });
    expect(targeted.stderr).not.toContain("Error");
    expect(targeted.exitCode).toBe(0);
    expect(changes(targeted.plan)).toEqual({ [WRITER]: ["create"] });
    expect(shownKeys(targeted.stdout).sort()).toEqual(['+ "s/t.in_sync" = (known after apply)', '+ "s/t.name" = "review-target"']);
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
