import { describeFilter, describeOffer, gpuModel, isSpotFlavor, selectFlavors } from "../../src/client";
import type { Flavor, FlavorRegionGroup } from "../../src/client";

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
  });
});
