/**
 * The claims of docs/operations.md ("Where secrets live", "Operating it"), checked with real
 * Terraform (offline, through the provider doubles) on the example stack against the fx.emulator.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";

import { GpuCiStack } from "../../examples/main";
import { closedPort } from "../support/closed-port";
import { describeWithTerraform, oneLine, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "ops-bot", password: "ops-password-41c7" };

describeWithTerraform("where the token value lives, and operating without the API", () => {
  const fx = terraformFixture({ users: [USER], timeoutSeconds: 5 });
  let stackDir: string;
  let tf: TerraformRunner;
  let value: string;

  beforeAll(async () => {
    stackDir = fx
      .folder({ prefix: "gpucloud-secrets-", stackId: "gpu-ci" })
      .synthApp((app) => new GpuCiStack(app, "gpu-ci", { regionId: "norway-east-1", tokenName: "ci-secrets" })).dir;
    tf = await fx.init(stackDir);
    await tf.apply({ check: true });
    value = fx.named("ci-secrets")[0].token;
    expect(value.length).toBeGreaterThan(20);
  });

  test("a saved plan file holds the value and is readable by group and others (mode 0644 under umask 022)", async () => {
    const planFile = path.join(stackDir, "tfplan");
    await tf.run("plan", [`-out=${planFile}`], { check: true });
    const mode = statSync(planFile).mode & 0o777;
    expect(mode & ~(0o666 & ~process.umask())).toBe(0); // no more than the umask allows
    if (process.umask() === 0o022) expect(mode).toBe(0o644);
    const shown = await tf.run("show", ["-json", planFile], { check: true });
    expect(shown.stdout).toContain(value);
  });

  test("plain `terraform show` prints the value (the data source result is not marked sensitive)", async () => {
    const shown = await tf.run("show", [], { check: true });
    expect(shown.stdout).toContain(value);
    // `terraform output` hides it unless asked for it by name or as JSON.
    const output = await tf.run("output", [], { check: true });
    expect(output.stdout).toMatch(/token = <sensitive>/);
    expect(output.stdout).not.toContain(value);
  });

  test("the state file holds the value", () => {
    // The example's LocalBackend writes terraform.tfstate into the stack folder.
    expect(readFileSync(path.join(stackDir, "terraform.tfstate"), "utf8")).toContain(value);
  });

  test("with the API down, destroy fails at the refresh; -refresh=false destroys", async () => {
    const down = fx.runner(stackDir, { env: fx.env({ GPUCLOUD_BASE_URL: `http://127.0.0.1:${await closedPort()}` }) });
    const failed = await down.destroy();
    expect(failed.exitCode).not.toBe(0);
    expect(oneLine(failed.stderr)).toMatch(/data\.external\./);
    expect(oneLine(failed.stderr)).toMatch(/ECONNREFUSED|connection refused/);

    const destroyed = await down.run("destroy", ["-auto-approve", "-refresh=false"], { check: true });
    // The stack's token writer and its roster; the roster's warning needs no API.
    expect(destroyed.stdout).toMatch(/Destroy complete! Resources: 2 destroyed\./);
    expect(destroyed.stdout).toContain("null_resource.gpucloud_token_writer: Destruction complete");
    expect(destroyed.stdout).toContain("terraform_data.gpucloud_token_roster[0]: Destruction complete");
    expect(oneLine(destroyed.stdout)).toMatch(
      /WARNING: API token "ci-secrets" on the account GPUCLOUD_\* stays ACTIVE: the stack is being destroyed/,
    );
    // The token itself stays: the API has no delete operation.
    expect(fx.emulator.tokens().filter((t) => t.name === "ci-secrets")).toHaveLength(1);
  });
});
