/**
 * An ApiToken whose name is only known at apply (taken from another resource's attribute), next
 * to one with a literal name, under real Terraform: the stack's read is then unknown at
 * plan, and the read after the writes must not take its count from it (Terraform refuses a
 * count it cannot know at plan: "Invalid count argument").
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Resource } from "@cdktf/provider-null/lib/resource";
import { App, LocalBackend, TerraformOutput, TerraformStack } from "cdktf";

import { ApiToken } from "../../src";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { credentialsEnv } from "../support/api-credentials";
import {
  describeWithTerraform,
  ensureProviderDoublesBuilt,
  type ProviderDoubles,
  startProviderDoubles,
  TerraformRunner,
} from "../support/terraform";

const USER = { username: "computed-bot", password: "computed-password-7d2a" };

describeWithTerraform("ApiToken with a name known only at apply, under real Terraform", () => {
  let emulator: RunningEmulator;
  let doubles: ProviderDoubles;
  let tf: TerraformRunner;

  beforeAll(async () => {
    ensureProviderDoublesBuilt();
    emulator = await startEmulator({ users: [USER] });
    doubles = await startProviderDoubles();
    const outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-computed-name-"));
    const app = new App({ outdir });
    const stack = new TerraformStack(app, "computed");
    new LocalBackend(stack, { path: "terraform.tfstate" }); // in the stack folder, not the repository
    const seed = new Resource(stack, "seed", {});
    new ApiToken(stack, "literal", { name: "literal-name" });
    const computed = new ApiToken(stack, "computed", { name: `ci-${seed.id}` });
    new TerraformOutput(stack, "computed_id", { value: computed.tokenId });
    new TerraformOutput(stack, "computed_name", { value: computed.name });
    app.synth();
    tf = new TerraformRunner(path.join(outdir, "stacks", "computed"), {
      doubles,
      env: credentialsEnv(emulator, USER),
    });
    await tf.init({ check: true });
  });
  afterAll(async () => {
    await doubles?.stop();
    await emulator?.close();
  });

  test("the first plan and apply succeed, the token is created with the computed name, and the next plan is empty", async () => {
    const plan = await tf.plan({});
    expect(plan.stderr).not.toMatch(/Invalid count argument/);
    expect(plan.exitCode).toBe(0);
    await tf.apply({ check: true, planFile: plan.planFile });

    const outputs = await tf.output();
    const name = String(outputs.computed_name.value);
    expect(name).toMatch(/^ci-\d+$/);
    const made = emulator.tokens().filter((t) => t.name === name);
    expect(made).toHaveLength(1);
    expect(outputs.computed_id.value).toBe(made[0].id);
    expect(emulator.tokens().filter((t) => t.name === "literal-name")).toHaveLength(1);

    const again = await tf.plan({ check: true, detailedExitCode: true });
    expect(again.exitCode).toBe(0);
  });
});
