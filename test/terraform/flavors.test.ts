/**
 * Flavors and FlavorPreference with real Terraform (offline, through the provider doubles)
 * against the emulator's seed catalog (see the table in src/emulator/seed.ts): each filter,
 * Terraform variables as filter values, region ids in another case, unknown regions, and the
 * ordered fallback of FlavorPreference.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";

import { TerraformOutput, type TerraformStack, TerraformVariable } from "cdktf";

import { FlavorPreference, Flavors, type FlavorsProps } from "../../src";
import { describeWithTerraform, oneLine, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "flavors", password: "flavors-password-5d1c" };

describeWithTerraform("real Terraform: Flavors filters and FlavorPreference", () => {
  const fx = terraformFixture({ users: [USER], timeoutSeconds: 20 });

  const stackWith = (build: (stack: TerraformStack) => void, env: NodeJS.ProcessEnv = {}): Promise<TerraformRunner> =>
    fx.stack(build, { env: fx.env(env), prefix: "gpucloud-flavors-" });

  const flavorGets = () => fx.emulator.stats().byRoute["GET /flavors"] ?? 0;

  test("each filter selects the flavors the seed table says, cheapest first", async () => {
    // One Flavors per filter in one stack, so that one apply checks them all.
    const filters: Record<string, FlavorsProps> = {
      family: { regionId: "norway-east-1", gpu: "H100" },
      memory: { regionId: "norway-east-1", gpu: "H100-80G", spot: false },
      full_name: { gpu: "h100-94g-nvl" },
      no_prefix_of_segment: { gpu: "H10", allowEmpty: true },
      several_models: { regionId: "norway-east-1", gpus: ["A100-40G", "L40S"] },
      several_regions_any_case: { regionIds: ["CANADA-CENTRAL-1", "us-east-1"], gpu: "RTX-A6000" },
      min_cpu: { regionId: "us-east-1", minCpu: 100 },
      min_ram: { regionId: "canada-central-1", minRamGb: 400 },
      min_disk: { regionId: "norway-east-1", minDiskGb: 200 },
      count_stock_price: { gpu: "H100", minGpuCount: 2, inStockOnly: true, maxPricePerHour: 12.6 },
      spot_only: { gpu: "A100", spot: true },
    };
    const tf = await stackWith((stack) => {
      for (const [name, props] of Object.entries(filters)) {
        new TerraformOutput(stack, `${name}_ids`, { value: new Flavors(stack, name, props).ids });
      }
    });
    await tf.apply({ check: true });
    const out = await tf.output();
    const ids = (name: string) => out[`${name}_ids`].value;
    expect(ids("family")).toEqual(["no1-h100x1-spot", "no1-h100x1", "no1-h100-nvlx1", "no1-h100x2", "no1-h100-sxm5x4", "no1-h100-sxm5x8"]);
    expect(ids("memory")).toEqual(["no1-h100x1", "no1-h100x2", "no1-h100-sxm5x4", "no1-h100-sxm5x8"]);
    expect(ids("full_name")).toEqual(["no1-h100-nvlx1"]);
    expect(ids("no_prefix_of_segment")).toEqual([]);
    expect(ids("several_models")).toEqual(["no1-l40sx1", "no1-a100-40gx2"]);
    expect(ids("several_regions_any_case")).toEqual(["ca1-rtx-a6000x1", "ca1-rtx-a6000x2", "ca1-rtx-a6000x4", "us1-rtx-a6000x8"]);
    expect(ids("min_cpu")).toEqual(["us1-h100-sxm5x8-spot", "us1-h100-sxm5x4", "us1-h100-sxm5x8"]);
    expect(ids("min_ram")).toEqual(["ca1-a100-40gx4", "ca1-a100-sxm4x8"]);
    expect(ids("min_disk")).toEqual(["no1-h100-sxm5x8"]);
    expect(ids("count_stock_price")).toEqual(["no1-h100x2", "us1-h100-sxm5x2", "us1-h100-sxm5x8-spot", "us1-h100-sxm5x4"]);
    expect(ids("spot_only")).toEqual(["us1-a100x1-spot", "ca1-a100x1-spot"]);
  });

  test("booleans, numbers and lists from Terraform variables are converted by Terraform and filter", async () => {
    const tf = await stackWith(
      (stack) => {
        const inStock = new TerraformVariable(stack, "in_stock", { type: "bool", default: false });
        const spot = new TerraformVariable(stack, "spot", { type: "bool" });
        const count = new TerraformVariable(stack, "gpu_count", { type: "number", default: 1 });
        const regions = new TerraformVariable(stack, "regions", { type: "list(string)" });
        const f = new Flavors(stack, "vars", {
          gpu: "H100",
          regionIds: regions.listValue,
          inStockOnly: inStock.booleanValue,
          spot: spot.booleanValue,
          gpuCount: count.numberValue,
        });
        new TerraformOutput(stack, "ids", { value: f.ids });
        // Variables that are null (set in terraform.tfvars.json below) mean "no filter".
        const nothing = new TerraformVariable(stack, "nothing", { type: "bool" });
        const noCount = new TerraformVariable(stack, "no_count", { type: "number" });
        const noRegions = new TerraformVariable(stack, "no_regions", { type: "list(string)" });
        const unfiltered = new Flavors(stack, "nulls", {
          gpu: "H100-94G",
          spot: nothing.booleanValue,
          inStockOnly: nothing.booleanValue,
          minCpu: noCount.numberValue,
          regionIds: noRegions.listValue,
        });
        new TerraformOutput(stack, "unfiltered", { value: unfiltered.ids });
      },
      { TF_VAR_in_stock: "true", TF_VAR_spot: "false", TF_VAR_regions: '["us-east-1","norway-east-1"]' },
    );
    writeFileSync(path.join(tf.dir, "terraform.tfvars.json"), JSON.stringify({ nothing: null, no_count: null, no_regions: null }));
    await tf.apply({ check: true });
    const out = await tf.output();
    // H100 x1, on demand, in stock, in either region: us1-h100x1 is out of stock.
    expect(out.ids.value).toEqual(["no1-h100x1", "no1-h100-nvlx1"]);
    expect(out.unfiltered.value).toEqual(["no1-h100-nvlx1"]);
  });

  test("an unknown region fails the plan (even with allowEmpty), listing the region ids that exist", async () => {
    const tf = await stackWith((stack) => {
      new TerraformOutput(stack, "ids", {
        value: new Flavors(stack, "f", { regionIds: ["norway-east-1", "norway-1"], allowEmpty: true }).ids,
      });
    });
    const plan = await tf.plan();
    expect(plan.exitCode).toBe(1);
    expect(oneLine(plan.stderr)).toContain(
      'Flavors "s/f": no region has id "norway-1"; the region ids that exist are: norway-east-1, canada-central-1, us-east-1',
    );
  });

  test("FlavorPreference: the first choice with a match wins, cheapest within it; one catalog read for the stack's lookups", async () => {
    const tf = await stackWith((stack) => {
      const first = new FlavorPreference(stack, "first", {
        choices: [
          { regionId: "norway-east-1", gpu: "H100", inStockOnly: true, spot: false },
          { regionId: "us-east-1", gpu: "H100", inStockOnly: true, spot: false },
        ],
      });
      const second = new FlavorPreference(stack, "second", {
        choices: [
          { regionId: "canada-central-1", gpu: "H100" },
          { regionIds: ["Canada-Central-1", "us-east-1"], gpus: ["H100-80G-SXM5", "A100-80G"], minGpuCount: 8, spot: false },
          { gpu: "RTX-A6000" },
        ],
      });
      for (const [name, p] of Object.entries({ first, second })) {
        new TerraformOutput(stack, `${name}_id`, { value: p.flavorId });
        new TerraformOutput(stack, `${name}_name`, { value: p.flavorName });
        new TerraformOutput(stack, `${name}_price`, { value: p.price });
        new TerraformOutput(stack, `${name}_region`, { value: p.regionId });
        new TerraformOutput(stack, `${name}_gpu`, { value: p.gpu });
        new TerraformOutput(stack, `${name}_gpu_count`, { value: p.gpuCount });
        new TerraformOutput(stack, `${name}_choice`, { value: p.choice });
      }
      new TerraformOutput(stack, "second_flavor_ram", { value: `\${${second.flavor}.ram}` });
    });
    await tf.apply({ check: true });
    const out = await tf.output();
    const value = (name: string) => out[name].value;
    expect([value("first_id"), value("first_name"), value("first_price"), value("first_region")]).toEqual([
      "no1-h100x1",
      "n3-H100x1",
      2.89,
      "norway-east-1",
    ]);
    expect([value("first_gpu"), value("first_gpu_count"), value("first_choice")]).toEqual(["H100-80G-PCIe", 1, 0]);
    // Canada Central has no H100, so choice 1 wins: A100-80G-SXM4 x8 (13.60) beats H100-80G-SXM5 x8 (25.20).
    expect([value("second_id"), value("second_price"), value("second_region"), value("second_choice")]).toEqual([
      "ca1-a100-sxm4x8",
      13.6,
      "canada-central-1",
      1,
    ]);
    expect([value("second_gpu"), value("second_gpu_count"), value("second_flavor_ram")]).toEqual(["A100-80G-SXM4", 8, 960]);

    // A plan reads the catalog once for both (the stack's one read): "second" has a choice without
    // region, so one call lists every region, which also answers "first" (2 regions alone).
    fx.emulator.resetStats();
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
    expect(flavorGets()).toBe(1);
    expect(fx.emulator.stats().logins).toBe(1);
  });

  test("FlavorPreference with no matching choice fails the plan, saying what each choice's regions offer", async () => {
    const tf = await stackWith((stack) => {
      const p = new FlavorPreference(stack, "none", {
        choices: [
          { regionId: "canada-central-1", gpu: "H100" },
          { regionId: "us-east-1", gpu: "L40S", maxPricePerHour: 1 },
        ],
      });
      new TerraformOutput(stack, "id", { value: p.flavorId });
    });
    const plan = await tf.plan();
    expect(plan.exitCode).toBe(1);
    const message = oneLine(plan.stderr);
    expect(message).toContain('FlavorPreference "s/none": no choice of the preference matches:');
    expect(message).toContain('choice 0 (region id canada-central-1, gpu H100): region "Canada Central" (id canada-central-1) offers: ');
    expect(message).toContain("A100-80G-PCIe x1/x2 from 1.70");
    expect(message).toContain('choice 1 (region id us-east-1, gpu L40S, price <= 1.00): region "US East" (id us-east-1) offers:');
    expect(message).toContain("L40S-48G x4 from 4.60");
    expect(message).not.toContain(USER.password);
  });
});
