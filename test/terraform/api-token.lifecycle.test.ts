/**
 * ApiToken's lifecycle, proven with real Terraform (offline, through the provider doubles)
 * against the emulator: each step asserts Terraform's plan and the API's state.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

import { GpuCiStack, type GpuCiStackProps } from "../../examples/main";
import { withoutNodeLineWarning } from "../support/processes";
import type { SynthFolder } from "../support/synth-folder";
import { describeWithTerraform, oneLine, outputChanges, type PlanJson, resourceActions, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "lifecycle-bot", password: "lifecycle-password-5c1e" };

/** Actions Terraform plans for the stack's token writer, a null_resource (there is exactly one). */
function writerActions(plan: PlanJson | undefined): string[] {
  const entries = Object.entries(resourceActions(plan!)).filter(([address]) => address.startsWith("null_resource."));
  expect(entries).toHaveLength(1);
  return entries[0][1];
}

describeWithTerraform("ApiToken lifecycle under real Terraform", () => {
  const fx = terraformFixture({ users: [USER] });
  let folder: SynthFolder;
  let tf: TerraformRunner;
  const NAME = "ci-lifecycle";

  /** Synthesizes the example into the same folder, as `cdktf synth` does on every deploy. */
  const synth = (props: Partial<GpuCiStackProps>) =>
    folder.synthApp(
      (app) => new GpuCiStack(app, "gpu-ci", { regionId: "norway-east-1", tokenName: NAME, tokenDescription: "v1", ...props }),
    );
  const tokensNamed = (name: string) => fx.named(name);

  beforeAll(async () => {
    folder = fx.folder({ prefix: "gpucloud-lifecycle-", stackId: "gpu-ci" });
    synth({});
    tf = await fx.init(folder.dir);
  });

  let firstId: string;
  let firstValue: string;

  test("first apply creates one token; outputs carry its id, the sensitive token and the cheapest H100", async () => {
    const plan = await tf.plan({ check: true });
    expect(writerActions(plan.plan)).toEqual(["create"]);
    await tf.apply({ check: true });

    const [token] = tokensNamed(NAME);
    expect(tokensNamed(NAME)).toHaveLength(1);
    expect(token.description).toBe("v1");
    const out = await tf.output();
    expect(out.token_id.value).toBe(token.id);
    expect(out.token).toEqual(expect.objectContaining({ sensitive: true, value: token.token }));
    expect(out.flavor_id.value).toBe("no1-h100x1");
    expect(out.flavor_name.value).toBe("n3-H100x1");
    expect(out.flavor_price.value).toBe(2.89);
    firstId = token.id;
    firstValue = token.token;
  });

  test("a second plan with no change plans no changes and writes nothing", async () => {
    fx.emulator.resetStats();
    const plan = await tf.plan({ detailedExitCode: true, check: true });
    expect(plan.exitCode).toBe(0);
    expect(plan.stdout).toContain("No changes.");
    expect(fx.emulator.stats().tokenWrites).toBe(0);
  });

  test("a description change updates the same token in place (same id, same value)", async () => {
    synth({ tokenDescription: "v2" });
    const plan = await tf.plan({ check: true });
    // The writer is replaced (that is how its provisioner runs again), naming the field; the token is not.
    expect(writerActions(plan.plan)).toEqual(["delete", "create"]);
    expect(plan.stdout).toMatch(/"gpu-ci\/ci-token.description"\s+= "v1" -> "v2"/);
    // The token keeps its id and value: its outputs are known at plan and do not change.
    expect(outputChanges(plan.plan!).token_id.actions).toEqual(["no-op"]);
    expect(outputChanges(plan.plan!).token_id.after).toBe(firstId);
    await tf.apply({ check: true });

    expect(fx.emulator.tokens().filter((t) => t.id === firstId)).toEqual([
      expect.objectContaining({ name: NAME, description: "v2", token: firstValue }),
    ]);
    expect((await tf.output()).token_id.value).toBe(firstId);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("a name change renames the same token; the token count is unchanged", async () => {
    const before = fx.emulator.tokens().length;
    synth({ tokenName: `${NAME}-renamed`, tokenDescription: "v2" });
    const plan = await tf.plan({ check: true });
    expect(writerActions(plan.plan)).toEqual(["delete", "create"]);
    const applied = await tf.apply({ check: true });
    expect(plan.stdout).toMatch(/"gpu-ci\/ci-token.name"\s+= "ci-lifecycle" -> "ci-lifecycle-renamed"/);
    expect(oneLine(applied.stdout)).toContain(
      `API token "${NAME}" (id ${firstId}) for gpu-ci/ci-token: renamed "${NAME}" to "${NAME}-renamed"`,
    );

    expect(fx.emulator.tokens()).toHaveLength(before);
    expect(fx.emulator.tokens().find((t) => t.id === firstId)).toMatchObject({ name: `${NAME}-renamed`, token: firstValue });
    expect(tokensNamed(NAME)).toHaveLength(0);
    expect((await tf.output()).token_id.value).toBe(firstId);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("a token deleted behind Terraform's back shows in the plan; one apply recreates it", async () => {
    expect(fx.emulator.deleteToken(firstId)).toBe(true);
    // A drift-detection pipeline's refresh-only plan shows the drift instead of failing.
    const refreshOnly = await tf.run("plan", ["-refresh-only", "-detailed-exitcode"]);
    expect(refreshOnly.stderr).not.toContain("Error");
    expect([0, 2]).toContain(refreshOnly.exitCode);
    const plan = await tf.plan({ detailedExitCode: true, check: true });
    expect(plan.exitCode).toBe(2);
    expect(writerActions(plan.plan)).toEqual(["delete", "create"]);
    expect(plan.stdout).toMatch(/"gpu-ci\/ci-token.in_sync"\s+= "true" -> \(known after apply\)/);

    await tf.apply({ check: true });
    const recreated = tokensNamed(`${NAME}-renamed`);
    expect(recreated).toHaveLength(1);
    expect(recreated[0].id).not.toBe(firstId);
    const out = await tf.output();
    expect(out.token_id.value).toBe(recreated[0].id);
    expect(out.token.value).toBe(recreated[0].token);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("destroy succeeds and warns that the token stays active; the next apply adopts it", async () => {
    const [token] = tokensNamed(`${NAME}-renamed`);
    const destroyed = await tf.destroy({ check: true });
    const log = oneLine(destroyed.stdout);
    // Once, from the stack's roster.
    expect(log).toContain(
      `WARNING: API token "${NAME}-renamed" on the account GPUCLOUD_* stays ACTIVE: the stack is being destroyed, and the GPU cloud API has no delete operation`,
    );
    expect(withoutNodeLineWarning(log).match(/WARNING/g)).toHaveLength(1);
    expect((await tf.show()).values?.root_module?.resources ?? []).toEqual([]);
    expect(tokensNamed(`${NAME}-renamed`)).toHaveLength(1);

    const before = fx.emulator.tokens().length;
    await tf.apply({ check: true });
    expect(fx.emulator.tokens()).toHaveLength(before);
    expect((await tf.output()).token_id.value).toBe(token.id);
  });

  test("nothing secret reached cdk.tf.json", () => {
    const config = readFileSync(path.join(tf.dir, "cdk.tf.json"), "utf8");
    expect(config).not.toContain(USER.password);
    for (const t of fx.emulator.tokens()) expect(config).not.toContain(t.token);
  });
});
