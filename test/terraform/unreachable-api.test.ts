/**
 * With real Terraform (offline, through the provider doubles): a wrong API address fails the plan
 * in seconds, not after the whole time budget, and the message says which address, where it came
 * from (the variable, or the baseUrl in the configuration) and which account it belongs to.
 */
import { TerraformOutput, type TerraformStack } from "cdktf";

import { ApiToken, Flavors, GpuCloudAccount } from "../../src";
import { closedPort } from "../support/closed-port";
import { describeWithTerraform, oneLine } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

describeWithTerraform("real Terraform: an API address that refuses connections", () => {
  // No emulator: nothing listens at the addresses these stacks are given.
  const fx = terraformFixture();

  // The default budget of 120 s stays in force: only the unreachable address is given up on early.
  const env = (over: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
    const base: NodeJS.ProcessEnv = { ...process.env };
    for (const name of Object.keys(base)) if (name.startsWith("GPUCLOUD_")) delete base[name];
    return { ...base, ...over };
  };

  test("an account's variable with a wrong address: the plan fails within about 20 s, naming the URL, the variable and the account", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const tf = await fx.stack(
      (stack: TerraformStack) => {
        const staging = new GpuCloudAccount(stack, "staging", { envPrefix: "GPUCLOUD_STAGING_" });
        const token = new ApiToken(stack, "ci", { name: "ci", account: staging });
        const gpu = new Flavors(stack, "gpu", { gpu: "H100", account: staging });
        new TerraformOutput(stack, "id", { value: token.tokenId });
        new TerraformOutput(stack, "cheapest", { value: gpu.cheapestId });
      },
      {
        env: env({ GPUCLOUD_STAGING_BASE_URL: url, GPUCLOUD_STAGING_USERNAME: "bot", GPUCLOUD_STAGING_PASSWORD: "pw-never-shown-5e1f" }),
      },
    );
    const started = Date.now();
    const plan = await tf.plan({ timeoutMs: 90_000 });
    const seconds = (Date.now() - started) / 1000;
    expect(plan.timedOut).toBe(false);
    expect(plan.exitCode).toBe(1);
    expect(seconds).toBeLessThan(25);
    const text = oneLine(plan.stderr);
    expect(text).toContain(`cannot reach the API at ${url} (from GPUCLOUD_STAGING_BASE_URL; account GPUCLOUD_STAGING_*)`);
    expect(text).toMatch(/a refused connection \(ECONNREFUSED\) on \d+ attempts/);
    expect(plan.stdout + plan.stderr).not.toContain("pw-never-shown-5e1f");
  }, 120_000);

  test("a construct's baseUrl with a wrong address: the message names the baseUrl prop", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const tf = await fx.stack(
      (stack: TerraformStack) => {
        const gpu = new Flavors(stack, "gpu", { gpu: "H100", baseUrl: url });
        new TerraformOutput(stack, "cheapest", { value: gpu.cheapestId });
      },
      { env: env({ GPUCLOUD_BASE_URL: "http://127.0.0.1:1", GPUCLOUD_API_TOKEN: "tok-never-shown-77aa" }) },
    );
    const started = Date.now();
    const plan = await tf.plan({ timeoutMs: 90_000 });
    expect(plan.exitCode).toBe(1);
    expect((Date.now() - started) / 1000).toBeLessThan(25);
    const text = oneLine(plan.stderr);
    expect(text).toContain(
      `cannot reach the API at ${url} (the baseUrl prop of the construct (or of its GpuCloudAccount), which overrides GPUCLOUD_BASE_URL; the default account, GPUCLOUD_*)`,
    );
    expect(plan.stdout + plan.stderr).not.toContain("tok-never-shown-77aa");
  }, 120_000);
});
