import { TerraformOutput, TerraformStack, TerraformVariable, Testing } from "cdktf";

import { FlavorPreference, type FlavorPreferenceProps } from "../../src";
import { onlyLookup, SHARED_FIELD } from "../support/stack-read";

function synth(props: FlavorPreferenceProps, build?: (stack: TerraformStack, p: FlavorPreference) => void): any {
  const app = Testing.app();
  const stack = new TerraformStack(app, "test");
  const preference = new FlavorPreference(stack, "gpu", props);
  build?.(stack, preference);
  return JSON.parse(Testing.synth(stack));
}

const lookup = onlyLookup;

describe("FlavorPreference synthesis", () => {
  test("template syntax in literal strings is escaped, so Terraform reads them as written", () => {
    const data = lookup(synth({ choices: [{ gpu: "g-${a}", regionIds: ["r-%{b}"] }], baseUrl: "http://h.test/${c}" }));
    expect(data.query).toEqual({
      choice_count: "1",
      choice0_gpu: "g-$${a}",
      choice0_region_ids: '["r-%%{b}"]',
      base_url: "http://h.test/$${c}",
    });
  });

  test("writes each choice's filter under its own prefix, in order, with the count", () => {
    const json = synth({
      choices: [
        { regionId: "norway-east-1", gpu: "H100", inStockOnly: true, spot: false },
        { regionIds: ["us-east-1", "canada-central-1"], gpus: ["H100-80G", "A100-80G"], gpuCount: 2, maxPricePerHour: 8 },
        { minCpu: 8, minRamGb: 48, minDiskGb: 100, minGpuCount: 1 },
      ],
      baseUrl: "http://127.0.0.1:9999",
    });
    const data = lookup(json);
    expect(data.program).toEqual(["node", expect.stringMatching(/gpucloud-tf\.js$/), "stack-read"]);
    expect([data.shared, data.kind, data.path]).toEqual([true, "flavor-preference", "test/gpu"]);
    expect(data.query).toEqual({
      choice_count: "3",
      choice0_region_id: "norway-east-1",
      choice0_gpu: "H100",
      choice0_in_stock_only: "true",
      choice0_spot: "false",
      choice1_region_ids: '["us-east-1","canada-central-1"]',
      choice1_gpus: '["H100-80G","A100-80G"]',
      choice1_gpu_count: "2",
      choice1_max_price_per_hour: "8",
      choice2_min_cpu: "8",
      choice2_min_ram_gb: "48",
      choice2_min_disk_gb: "100",
      choice2_min_gpu_count: "1",
      base_url: "http://127.0.0.1:9999",
    });
    expect(json.provider.external).toBeDefined();
    // No resource but the stack's token roster, which has no instance without an ApiToken (see TokenRoster).
    expect(Object.keys(json.resource)).toEqual(["terraform_data"]);
    expect(json.resource.terraform_data.gpucloud_token_roster.count).toBe(0);
  });

  test("exposes the chosen flavor's attributes, numbers converted", () => {
    const json = synth({ choices: [{ gpu: "H100" }] }, (stack, p) => {
      for (const [name, value] of Object.entries({
        id: p.flavorId,
        name: p.flavorName,
        price: p.price,
        region: p.regionId,
        model: p.gpu,
        gpus: p.gpuCount,
        choice: p.choice,
        flavor: p.flavor,
      })) {
        new TerraformOutput(stack, name, { value });
      }
    });
    const field = SHARED_FIELD;
    expect(json.output.id.value).toMatch(new RegExp(`^\\$\\{${field("flavor_id")}\\}$`));
    expect(json.output.name.value).toMatch(new RegExp(field("flavor_name")));
    expect(json.output.region.value).toMatch(new RegExp(field("region_id")));
    expect(json.output.model.value).toMatch(new RegExp(field("gpu")));
    expect(json.output.price.value).toMatch(new RegExp(`^\\$\\{tonumber\\(${field("price")}\\)\\}$`));
    expect(json.output.gpus.value).toMatch(new RegExp(`tonumber\\(${field("gpu_count")}\\)`));
    expect(json.output.choice.value).toMatch(new RegExp(`tonumber\\(${field("choice")}\\)`));
    expect(json.output.flavor.value).toMatch(new RegExp(`jsondecode\\(${field("flavor")}\\)`));
  });

  test("boolean choices given as Terraform variables are rendered with tostring", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "test");
    const spot = new TerraformVariable(stack, "spot", { type: "bool" });
    new FlavorPreference(stack, "gpu", { choices: [{ gpu: "H100", spot: spot.booleanValue }, { gpu: "A100" }] });
    const data = lookup(JSON.parse(Testing.synth(stack)));
    expect([data.shared, data.kind]).toEqual([false, "flavor-preference"]);
    expect(data.query).toEqual({ choice_count: "2", choice0_gpu: "H100", choice0_spot: "${tostring(var.spot)}", choice1_gpu: "A100" });
  });

  describe("rejects bad props at synth time, naming the choice", () => {
    const cases: Array<[string, any, RegExp]> = [
      ["no choices", { choices: [] }, /FlavorPreference "test\/gpu": choices must be a list of at least one filter/],
      ["missing choices", {}, /choices must be a list of at least one filter/],
      [
        "gpu and gpus in a choice",
        { choices: [{ gpu: "H100" }, { gpu: "A100", gpus: ["L40S"] }] },
        /choices\[1\]\.give gpu or gpus, not both/,
      ],
      ["a bad count in a choice", { choices: [{ gpuCount: 0 }] }, /choices\[0\]\.gpuCount must be a whole number of at least 1/],
      ["a non-boolean in a choice", { choices: [{ inStockOnly: "yes" }] }, /choices\[0\]\.inStockOnly must be true or false/],
      ["a baseUrl with credentials", { choices: [{}], baseUrl: "http://u:p@h" }, /baseUrl must not contain credentials/],
    ];
    test.each(cases)("%s", (_label, props, message) => {
      expect(() => synth(props)).toThrow(message);
    });
  });
});
