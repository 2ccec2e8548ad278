/**
 * A stack deployed by the version before accounts existed (its cdk.tf.json, synthesized by
 * commit 53c314d, is test/terraform/fixtures/pre-accounts.cdk.tf.json) upgrades without a
 * write: synthesized again by this version, the plan changes no sync resource (it only adds the
 * stack's token roster, a terraform_data) and the apply writes nothing to the API. The fixture was made by the stack below with that commit's lib/
 * (`git archive 53c314d`, tsc + scripts/build.mjs); its first apply runs this version's script,
 * since only the configuration and the state the old version left matter to the plan.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { App, LocalBackend, TerraformOutput, TerraformStack } from "cdktf";
import { ApiToken, FlavorPreference, Flavors } from "../../src";
import { startEmulator, type RunningEmulator } from "../../src/emulator";
import { credentialsEnv } from "../support/api-credentials";
import {
  describeWithTerraform,
  ensureProviderDoublesBuilt,
  repoRoot,
  startProviderDoubles,
  TerraformRunner,
  type ProviderDoubles,
} from "../support/terraform";

const USER = { username: "upgrade-bot", password: "upgrade-password-2b8c" };
const FIXTURE = path.join(__dirname, "fixtures", "pre-accounts.cdk.tf.json");

/** The stack of the fixture, as this version synthesizes it. */
function synthNow(outdir: string): void {
  const app = new App({ outdir });
  const stack = new TerraformStack(app, "upgrade");
  new LocalBackend(stack, { path: "terraform.tfstate" });
  const ci = new ApiToken(stack, "ci", { name: "ci-upgrade", description: "written by the previous version", previousNames: ["ci-old"] });
  new ApiToken(stack, "plain", { name: "plain-upgrade" });
  const gpus = new Flavors(stack, "gpus", { regionId: "norway-east-1", gpu: "H100" });
  const pick = new FlavorPreference(stack, "pick", {
    choices: [{ gpu: "H100", regionId: "norway-east-1" }, { regionId: "norway-east-1" }],
  });
  new TerraformOutput(stack, "ci_id", { value: ci.tokenId });
  new TerraformOutput(stack, "cheapest", { value: gpus.cheapestId });
  new TerraformOutput(stack, "picked", { value: pick.flavorId });
  app.synth();
}

describeWithTerraform("upgrade of a stack deployed before accounts existed, under real Terraform", () => {
  let emulator: RunningEmulator;
  let doubles: ProviderDoubles;
  let outdir: string;

  beforeAll(async () => {
    ensureProviderDoublesBuilt();
    emulator = await startEmulator({ users: [USER] });
    doubles = await startProviderDoubles();
    outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-upgrade-"));
  });
  afterAll(async () => {
    await doubles?.stop();
    await emulator?.close();
    if (outdir && process.env.KEEP_TF_TEST_DIRS !== "1") rmSync(outdir, { recursive: true, force: true });
  });

  test("the plan after the upgrade changes nothing but adding the stack's token roster, and its apply writes nothing", async () => {
    const stackDir = path.join(outdir, "stacks", "upgrade");
    const old = readFileSync(FIXTURE, "utf8");
    const script = /"\.\/(assets\/gpucloud-runtime\/[0-9A-F]+)\/gpucloud-tf\.js"/.exec(old)![1];
    mkdirSync(stackDir, { recursive: true });
    writeFileSync(path.join(stackDir, "cdk.tf.json"), old);
    cpSync(path.join(repoRoot(), "lib", "assets"), path.join(stackDir, script), { recursive: true });

    const tf = new TerraformRunner(stackDir, { doubles, env: credentialsEnv(emulator, USER) });
    await tf.init({ check: true });
    await tf.apply({ check: true });
    expect(
      emulator
        .tokens()
        .map((t) => t.name)
        .sort(),
    ).toEqual(["ci-upgrade", "plain-upgrade"]);
    const before = await tf.output();

    synthNow(outdir);
    expect(readFileSync(path.join(stackDir, "cdk.tf.json"), "utf8")).not.toBe(old); // this version's configuration
    emulator.resetStats();
    const plan = await tf.plan({ detailedExitCode: true });
    // One create: the roster (a terraform_data, no provider) this version adds to every stack with ApiTokens, so that
    // removing one warns. Every sync resource keeps its address and triggers: no replacement, no write.
    expect(plan.exitCode).toBe(2);
    const changed = (plan.plan!.resource_changes ?? []).filter((rc) => rc.change.actions.join() !== "no-op");
    expect(changed.map((rc) => [rc.address, rc.change.actions])).toEqual([["terraform_data.gpucloud_token_roster[0]", ["create"]]]);
    expect((plan.plan!.resource_changes ?? []).filter((rc) => rc.type === "null_resource").map((rc) => rc.change.actions)).toEqual([
      ["no-op"],
      ["no-op"],
    ]);
    await tf.apply({ check: true, planFile: plan.planFile });
    expect(emulator.stats().tokenWrites).toBe(0);
    expect(await tf.output()).toEqual(before);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });
});
