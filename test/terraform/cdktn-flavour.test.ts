/**
 * The CDK Terrain flavour under real Terraform (offline, through the provider doubles) against
 * the emulator: a cdktn app with an ApiToken and a Flavors lookup deploys, plans again with no
 * changes, and destroys.
 */
import { ApiToken, Flavors } from "cdktf-gpucloud/cdktn";
import { App, LocalBackend, TerraformOutput, TerraformStack } from "cdktn";

import { describeWithTerraform, resourceActions, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "cdktn-bot", password: "cdktn-password-7d2f" };
const NAME = "ci-cdktn";

describeWithTerraform("CDK Terrain flavour under real Terraform", () => {
  const fx = terraformFixture({ users: [USER] });
  let tf: TerraformRunner;

  beforeAll(async () => {
    // cdktn's own App: the folder's synth would take cdktf's, which this flavour's constructs do not fit.
    const folder = fx.folder({ prefix: "gpucloud-cdktn-", stackId: "gpu-ci" });
    const app = new App({ outdir: folder.outdir });
    const stack = new TerraformStack(app, "gpu-ci");
    new LocalBackend(stack, { path: "terraform.tfstate" });
    const h100 = new Flavors(stack, "h100", { regionId: "norway-east-1", gpu: "H100", gpuCount: 1, inStockOnly: true, spot: false });
    const token = new ApiToken(stack, "ci-token", { name: NAME, description: "from cdktn" });
    new TerraformOutput(stack, "flavor_id", { value: h100.cheapestId });
    new TerraformOutput(stack, "token_id", { value: token.tokenId });
    new TerraformOutput(stack, "token", { value: token.token, sensitive: true });
    app.synth();
    tf = await fx.init(folder.dir);
  });

  test("deploy creates the token and reads the cheapest H100", async () => {
    const plan = await tf.plan({ check: true });
    const actions = resourceActions(plan.plan!);
    // The stack's one token writer of the default account, whose triggers name the token's fields by construct path.
    expect(Object.entries(actions).filter(([a]) => a.startsWith("null_resource."))).toEqual([
      ["null_resource.gpucloud_token_writer", ["create"]],
    ]);
    const writer = plan.plan!.resource_changes!.find((rc) => rc.address === "null_resource.gpucloud_token_writer")!;
    expect((writer.change.after as { triggers: Record<string, string> }).triggers).toEqual({
      "gpu-ci/ci-token.name": NAME,
      "gpu-ci/ci-token.description": "from cdktn",
    });
    // The drift marker: unknown at plan while the API has no such token.
    expect(writer.change.after_unknown).toEqual({ id: true, triggers: { "gpu-ci/ci-token.in_sync": true } });
    const applied = await tf.apply({ check: true });
    expect(applied.stdout).toMatch(new RegExp(`gpucloud: created API token "${NAME}" \\(id \\S+\\) for gpu-ci/ci-token`));

    const tokens = fx.named(NAME);
    expect(tokens).toHaveLength(1);
    expect(tokens[0].description).toBe("from cdktn");
    const out = await tf.output();
    expect(out.token_id.value).toBe(tokens[0].id);
    expect(out.token).toEqual(expect.objectContaining({ sensitive: true, value: tokens[0].token }));
    expect(out.flavor_id.value).toBe("no1-h100x1");
  });

  test("a second plan has no changes and writes nothing", async () => {
    fx.emulator.resetStats();
    const plan = await tf.plan({ detailedExitCode: true, check: true });
    expect(plan.exitCode).toBe(0);
    expect(plan.stdout).toContain("No changes.");
    expect(fx.emulator.stats().tokenWrites).toBe(0);
  });

  test("destroy removes everything from the state", async () => {
    await tf.destroy({ check: true });
    const state = await tf.show();
    expect(state.values?.root_module?.resources ?? []).toEqual([]);
  });
});
