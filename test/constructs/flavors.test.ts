import { TerraformOutput, TerraformStack, Testing } from "cdktf";
import { Flavors, type FlavorsProps } from "../../src";

function synth(props: FlavorsProps, outputs?: (f: Flavors, stack: TerraformStack) => void): any {
  const app = Testing.app();
  const stack = new TerraformStack(app, "test");
  const flavors = new Flavors(stack, "gpu", props);
  outputs?.(flavors, stack);
  return JSON.parse(Testing.synth(stack));
}

function lookup(json: any): any {
  const all = Object.values<any>(json.data.external);
  expect(all).toHaveLength(1);
  return all[0];
}

describe("Flavors synthesis", () => {
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
    expect(data.program).toEqual(["node", expect.stringMatching(/^\.\/assets\/gpucloud-runtime\/.*\/gpucloud-tf\.js$/), "flavors"]);
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
    expect(json.resource).toBeUndefined();
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
    expect(json.output.all.value).toMatch(/^\$\{jsondecode\(data\.external\.gpu_lookup_[0-9A-F]+\.result\["flavors"\]\)\}$/);
    expect(json.output.ids.value).toContain('jsondecode(data.external.gpu_lookup_');
    expect(json.output.count.value).toContain('tonumber(');
    expect(json.output.id.value).toContain('result["cheapest_id"]');
    expect(json.output.price.value).toMatch(/^\$\{\(length\(data\.external\.gpu_lookup_\w+\.result\["cheapest_price"\]\) < 1\) \? null : tonumber\(/);
    expect(json.output.gpus.value).toContain('result["cheapest_gpu_count"]');
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
      ["a baseUrl with credentials", { baseUrl: "http://a:b@h" }, /baseUrl must not contain credentials/],
    ];
    test.each(cases)("%s", (_label, props, message) => {
      expect(() => synth(props)).toThrow(message);
    });
  });
});
