import type { Flavor, FlavorRegionGroup } from "../../src/client";
import { describeFilter, describeOffer, gpuMatches, gpuModel, isSpotFlavor, selectFlavors } from "../../src/client";

function f(p: Partial<Flavor> & { id: string }): Flavor {
  return {
    name: p.id,
    region_name: "Norway East",
    region_id: "r-no",
    price: 1,
    cpu: 8,
    disk: 100,
    ram: 64,
    gpu: "A100",
    gpu_count: 1,
    cycle: "hourly",
    description: "",
    ...p,
  } as Flavor;
}

const norway: FlavorRegionGroup = {
  region: "Norway East",
  products: [
    f({ id: "a1", name: "a100-1", gpu: "A100", gpu_count: 1, price: 1.1, stock_available: true }),
    f({ id: "a2", name: "a100-2", gpu: "A100", gpu_count: 2, price: 2.2, stock_available: true }),
    f({ id: "h8", name: "h100-8", gpu: "H100", gpu_count: 8, price: 19.2, stock_available: false }),
    f({ id: "h1", name: "h100-1", gpu: "H100", gpu_count: 1, price: 2.4 }),
    f({ id: "h2", name: "h100-2", gpu: "h100", gpu_count: 2, price: 4.8 }),
    f({ id: "ls", name: "l40s-spot-1", gpu: "L40S-spot", gpu_count: 1, price: 0.5 }),
    f({ id: "hs", name: "h100-spot-1", gpu: "H100-SPOT", gpu_count: 1, price: 1.2, stock_available: true }),
  ],
};
const canada: FlavorRegionGroup = {
  region: "Canada",
  products: [
    f({ id: "c1", name: "zz", region_name: "Canada", region_id: "r-ca", gpu: "A100", price: 1.1, stock_available: true }),
    f({ id: "c0", name: "aa", region_name: "Canada", region_id: "r-ca", gpu: "A100", price: 1.1, stock_available: true }),
  ],
};
const groups = [norway, canada];
const ids = (list: Flavor[]) => list.map((x) => x.id);

describe("spot and model", () => {
  it("recognizes -spot case-insensitively and strips it", () => {
    expect(isSpotFlavor({ gpu: "L40S-spot" })).toBe(true);
    expect(isSpotFlavor({ gpu: "H100-SPOT" })).toBe(true);
    expect(isSpotFlavor({ gpu: "H100" })).toBe(false);
    expect(gpuModel({ gpu: "H100-Spot" })).toBe("H100");
    expect(gpuModel({ gpu: "A100" })).toBe("A100");
  });
});

describe("gpuMatches: leading dash-separated segments, case and -spot ignored", () => {
  const cases: Array<[string, string, boolean]> = [
    ["H100-80G-SXM5", "H100", true],
    ["H100-80G-PCIe", "h100", true],
    ["h100-80g-pcie-spot", "H100", true],
    ["H100-80G-PCIe", "H100-80G", true],
    ["H100-94G-NVL", "H100-80G", false],
    ["H100-80G-SXM5", "H10", false],
    ["H100-80G-SXM5", "H100-80", false],
    ["H100-80G-PCIe", "H100-80G-PCIe", true],
    ["H100-80G-SXM5", "H100-80G-PCIe", false],
    ["h100-80g-pcie-spot", "H100-80G-PCIe", true],
    ["H100-80G-PCIe", "H100-80G-PCIe-spot", true],
    ["H100-80G", "H100-80G-PCIe", false],
    ["RTX-A6000", "RTX", true],
    ["RTX-A6000", "A6000", false],
    ["rtx-a6000", "RTX-A6000", true],
    ["H100", "", false],
    ["H100", "spot", false],
  ];
  test.each(cases)("%s vs %s → %s", (gpu, wanted, expected) => {
    expect(gpuMatches(gpu, wanted)).toBe(expected);
  });
});

describe("selectFlavors", () => {
  it("flattens and sorts by price, then name, then id", () => {
    expect(ids(selectFlavors(groups, {}))).toEqual(["ls", "a1", "c0", "c1", "hs", "a2", "h1", "h2", "h8"]);
  });

  it("matches the GPU model case-insensitively, ignoring -spot on both sides", () => {
    expect(ids(selectFlavors(groups, { gpu: "h100" }))).toEqual(["hs", "h1", "h2", "h8"]);
    expect(ids(selectFlavors(groups, { gpu: "H100-spot" }))).toEqual(["hs", "h1", "h2", "h8"]);
    expect(ids(selectFlavors(groups, { gpu: "H100", spot: true }))).toEqual(["hs"]);
    expect(ids(selectFlavors(groups, { gpu: "H100", spot: false }))).toEqual(["h1", "h2", "h8"]);
  });

  it("filters by count, minimum count, price, stock and region", () => {
    expect(ids(selectFlavors(groups, { gpuCount: 2 }))).toEqual(["a2", "h2"]);
    expect(ids(selectFlavors(groups, { minGpuCount: 2 }))).toEqual(["a2", "h2", "h8"]);
    expect(ids(selectFlavors(groups, { maxPricePerHour: 1.1 }))).toEqual(["ls", "a1", "c0", "c1"]);
    // unknown stock (no field) is not "in stock"
    expect(ids(selectFlavors(groups, { inStockOnly: true, regionId: "r-no" }))).toEqual(["a1", "hs", "a2"]);
    expect(ids(selectFlavors(groups, { regionId: "r-ca" }))).toEqual(["c0", "c1"]);
  });

  it("matches model families, several models, several regions (any case) and minimums", () => {
    const real: FlavorRegionGroup[] = [
      {
        region: "NORWAY",
        products: [
          f({ id: "pcie", region_id: "NORWAY-1", gpu: "H100-80G-PCIe", price: 2, cpu: 28, ram: 180, disk: 100 }),
          f({ id: "sxm", region_id: "NORWAY-1", gpu: "H100-80G-SXM5", price: 3, cpu: 56, ram: 360, disk: 200 }),
          f({ id: "nvl", region_id: "NORWAY-1", gpu: "H100-94G-NVL", price: 4, cpu: 32, ram: 188, disk: 100 }),
          f({ id: "a40", region_id: "NORWAY-1", gpu: "A100-40G-SXM4", price: 1, cpu: 14, ram: 120, disk: 100 }),
        ],
      },
      { region: "US", products: [f({ id: "us", region_id: "us-1", gpu: "h100-80g-pcie-spot", price: 1.5 })] },
    ];
    expect(ids(selectFlavors(real, { gpu: "H100" }))).toEqual(["us", "pcie", "sxm", "nvl"]);
    expect(ids(selectFlavors(real, { gpu: "H100-80G" }))).toEqual(["us", "pcie", "sxm"]);
    expect(ids(selectFlavors(real, { gpu: "H10" }))).toEqual([]);
    expect(ids(selectFlavors(real, { gpus: ["A100-40G", "H100-94G-NVL"] }))).toEqual(["a40", "nvl"]);
    expect(ids(selectFlavors(real, { regionId: "norway-1", gpu: "H100" }))).toEqual(["pcie", "sxm", "nvl"]);
    expect(ids(selectFlavors(real, { regionIds: ["US-1", "norway-1"], gpu: "H100-80G-PCIe" }))).toEqual(["us", "pcie"]);
    expect(ids(selectFlavors(real, { minCpu: 30 }))).toEqual(["sxm", "nvl"]);
    expect(ids(selectFlavors(real, { minRamGb: 185 }))).toEqual(["sxm", "nvl"]);
    expect(ids(selectFlavors(real, { minDiskGb: 150 }))).toEqual(["sxm"]);
    // The same product listed twice (two overlapping region calls) is kept once.
    expect(ids(selectFlavors([...real, ...real], { gpu: "A100" }))).toEqual(["a40"]);
  });

  it("applies regionId client-side even if the server returned other regions", () => {
    expect(selectFlavors([canada], { regionId: "r-no" })).toEqual([]);
  });
});

describe("describeOffer", () => {
  it("summarizes a region: models, counts, lowest price, stock", () => {
    expect(describeOffer(groups, { regionId: "r-no" })).toBe(
      'region "Norway East" (id r-no) offers: A100 x1/x2 from 1.10, H100 x1/x2/x8 from 2.40 (H100 x8 out of stock), ' +
        "H100-SPOT x1 from 1.20, L40S-spot x1 from 0.50; 3 products have no stock information",
    );
  });

  it("describes every region without a regionId", () => {
    const text = describeOffer(groups, {});
    expect(text).toContain('region "Norway East" (id r-no) offers:');
    expect(text).toContain('; region "Canada" (id r-ca) offers: A100 x1 from 1.10');
  });

  it("names the known regions when the asked one does not exist", () => {
    expect(describeOffer(groups, { regionId: "R-NO" })).toMatch(/^region "Norway East" \(id r-no\) offers:/);
    expect(describeOffer(groups, { regionId: "r-xx" })).toBe(
      'no region has id "r-xx"; regions: "Norway East" (id r-no), "Canada" (id r-ca)',
    );
    expect(describeOffer([], {})).toBe("no region offers any flavor");
    expect(describeOffer([{ region: "Empty", products: [] }], {})).toBe('region "Empty" offers no flavors');
  });

  it("describes a filter in words", () => {
    expect(describeFilter({ gpu: "H100", gpuCount: 8, inStockOnly: true, spot: false, maxPricePerHour: 3 })).toBe(
      "gpu H100, 8 GPUs, in stock, no spot, price <= 3.00",
    );
    expect(describeFilter({})).toBe("any flavor");
    expect(describeFilter({ regionIds: ["a", "b"], gpus: ["H100", "A100-80G"], minCpu: 8, minRamGb: 64, minDiskGb: 200, spot: true })).toBe(
      "region ids a/b, gpu H100/A100-80G, at least 8 CPUs, at least 64 GB RAM, at least 200 GB disk, spot only",
    );
  });
});
