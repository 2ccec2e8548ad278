import { TerraformOutput, TerraformStack, TerraformVariable, Testing } from "cdktf";

import { Flavors, type FlavorsProps } from "../../src";
import { onlyLookup, SHARED_FIELD } from "../support/stack-read";

function synth(props: FlavorsProps, outputs?: (f: Flavors, stack: TerraformStack) => void): any {
  const app = Testing.app();
  const stack = new TerraformStack(app, "test");
  const flavors = new Flavors(stack, "gpu", props);
  outputs?.(flavors, stack);
  return JSON.parse(Testing.synth(stack));
}

const lookup = onlyLookup;

describe("Flavors synthesis", () => {
  test("template syntax in literal strings is escaped, so Terraform reads them as written", () => {
    const one = lookup(synth({ regionId: "r-${a}", gpu: "g-%{ if b }", baseUrl: "http://h.test/${e}" }));
    expect(one.query).toEqual({ region_id: "r-$${a}", gpu: "g-%%{ if b }", base_url: "http://h.test/$${e}" });
    const lists = lookup(synth({ gpus: ["x-${c}"], regionIds: ["y-%{d}"] }));
    expect(lists.query).toEqual({ region_ids: '["y-%%{d}"]', gpus: '["x-$${c}"]' });
  });

  test("passes every filter prop to the plan-time lookup as a string query", () => {
    const json = synth({
      regionId: "region-1",
      gpu: "H100",
      gpuCount: 8,
      minGpuCount: 2,
      inStockOnly: true,
      spot: false,
      maxPricePerHour: 12.5,
      allowEmpty: true,
      baseUrl: "http://127.0.0.1:9999",
    });
    const data = lookup(json);
    // A literal query: the stack's one read answers it, naming the construct for its errors.
    expect(data.program).toEqual(["node", expect.stringMatching(/^\.\/assets\/gpucloud-runtime\/.*\/gpucloud-tf\.js$/), "stack-read"]);
    expect([data.shared, data.kind, data.path]).toEqual([true, "flavors", "test/gpu"]);
    expect(data.query).toEqual({
      region_id: "region-1",
      gpu: "H100",
      gpu_count: "8",
      min_gpu_count: "2",
      in_stock_only: "true",
      spot: "false",
      max_price_per_hour: "12.5",
      allow_empty: "true",
      base_url: "http://127.0.0.1:9999",
    });
    expect(json.provider.external).toBeDefined();
    expect(json.provider.null).toBeUndefined();
    // No resource but the stack's token roster, which has no instance without an ApiToken (see TokenRoster).
    expect(Object.keys(json.resource)).toEqual(["terraform_data"]);
    expect(json.resource.terraform_data.gpucloud_token_roster.count).toBe(0);
  });

  test("passes the list and minimum filters: JSON arrays and whole numbers as text", () => {
    const data = lookup(
      synth({ regionIds: ["norway-east-1", "US-EAST-1"], gpus: ["H100", "A100-80G"], minCpu: 16, minRamGb: 128, minDiskGb: 200 }),
    );
    expect(data.query).toEqual({
      region_ids: '["norway-east-1","US-EAST-1"]',
      gpus: '["H100","A100-80G"]',
      min_cpu: "16",
      min_ram_gb: "128",
      min_disk_gb: "200",
    });
  });

  test("Terraform variables for booleans, numbers and lists are rendered for Terraform to convert, not rejected", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "test");
    const inStock = new TerraformVariable(stack, "in_stock", { type: "bool" });
    const spot = new TerraformVariable(stack, "spot", { type: "bool" });
    const allowEmpty = new TerraformVariable(stack, "allow_empty", { type: "bool" });
    const count = new TerraformVariable(stack, "count", { type: "number" });
    const regions = new TerraformVariable(stack, "regions", { type: "list(string)" });
    const gpu = new TerraformVariable(stack, "model", { type: "string" });
    new Flavors(stack, "gpu", {
      inStockOnly: inStock.booleanValue,
      spot: spot.booleanValue,
      allowEmpty: allowEmpty.booleanValue,
      gpuCount: count.numberValue,
      minCpu: count.numberValue,
      regionIds: regions.listValue,
      gpus: [gpu.stringValue, "A100"],
    });
    const data = lookup(JSON.parse(Testing.synth(stack)));
    // An expression in the query: a data source of its own, running the flavors command, as before.
    expect([data.shared, data.kind]).toEqual([false, "flavors"]);
    expect(data.query).toEqual({
      in_stock_only: "${tostring(var.in_stock)}",
      spot: "${tostring(var.spot)}",
      allow_empty: "${tostring(var.allow_empty)}",
      gpu_count: "${tostring(var.count)}",
      min_cpu: "${tostring(var.count)}",
      region_ids: "${jsonencode(var.regions)}",
      gpus: '${jsonencode([var.model, "A100"])}',
    });
  });

  test("sends no filter that was not given", () => {
    expect(lookup(synth({})).query).toEqual({});
    expect(lookup(synth({ spot: true })).query).toEqual({ spot: "true" });
  });

  test("decodes the JSON-encoded results and guards the numbers of an empty match", () => {
    const json = synth({ gpu: "A100" }, (f, stack) => {
      new TerraformOutput(stack, "all", { value: f.flavors });
      new TerraformOutput(stack, "ids", { value: f.ids });
      new TerraformOutput(stack, "count", { value: f.count });
      new TerraformOutput(stack, "price", { value: f.cheapestPrice });
      new TerraformOutput(stack, "id", { value: f.cheapestId });
      new TerraformOutput(stack, "gpus", { value: f.cheapestGpuCount });
    });
    const field = SHARED_FIELD;
    expect(json.output.all.value).toMatch(new RegExp(`^\\$\\{jsondecode\\(${field("flavors")}\\)\\}$`));
    expect(json.output.ids.value).toMatch(new RegExp(`^\\$\\{jsondecode\\(${field("ids")}\\)\\}$`));
    expect(json.output.count.value).toMatch(new RegExp(`^\\$\\{tonumber\\(${field("count")}\\)\\}$`));
    expect(json.output.id.value).toMatch(new RegExp(`^\\$\\{${field("cheapest_id")}\\}$`));
    expect(json.output.price.value).toMatch(new RegExp(`^\\$\\{\\(length\\(${field("cheapest_price")}\\) < 1\\) \\? null : tonumber\\(`));
    expect(json.output.gpus.value).toMatch(new RegExp(field("cheapest_gpu_count")));
  });

  describe("rejects bad props at synth time", () => {
    const cases: Array<[string, any, RegExp]> = [
      ["gpuCount 0", { gpuCount: 0 }, /Flavors "test\/gpu": gpuCount must be a whole number of at least 1, got 0/],
      ["gpuCount 1.5", { gpuCount: 1.5 }, /gpuCount must be a whole number/],
      ["minGpuCount -1", { minGpuCount: -1 }, /minGpuCount must be a whole number/],
      ["gpuCount below minGpuCount", { gpuCount: 2, minGpuCount: 4 }, /gpuCount \(2\) is below minGpuCount \(4\)/],
      ["a zero price", { maxPricePerHour: 0 }, /maxPricePerHour must be a number greater than 0/],
      ["a NaN price", { maxPricePerHour: Number.NaN }, /maxPricePerHour must be a number greater than 0/],
      ["an empty region", { regionId: " " }, /regionId must be a non-empty string/],
      ["an empty gpu", { gpu: "" }, /gpu must be a non-empty string/],
      ["a non-boolean spot", { spot: "yes" }, /spot must be true or false/],
      ["a non-boolean allowEmpty", { allowEmpty: 1 }, /allowEmpty must be true or false/],
      ["gpu and gpus", { gpu: "H100", gpus: ["A100"] }, /Flavors "test\/gpu": give gpu or gpus, not both/],
      ["regionId and regionIds", { regionId: "a", regionIds: ["b"] }, /give regionId or regionIds, not both/],
      ["an empty gpus", { gpus: [] }, /gpus must be a list of at least one gpu/],
      ["a blank entry in regionIds", { regionIds: ["a", " "] }, /regionIds must contain only non-empty strings/],
      ["minCpu 0", { minCpu: 0 }, /minCpu must be a whole number of at least 1, got 0/],
      ["minRamGb 1.5", { minRamGb: 1.5 }, /minRamGb must be a whole number/],
      ["minDiskGb -10", { minDiskGb: -10 }, /minDiskGb must be a whole number/],
      ["a baseUrl with credentials", { baseUrl: "http://a:b@h" }, /baseUrl must not contain credentials/],
    ];
    test.each(cases)("%s", (_label, props, message) => {
      expect(() => synth(props)).toThrow(message);
    });
  });
});
