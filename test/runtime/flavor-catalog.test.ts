import type { FlavorRegionGroup } from "../../src/client";
import { GpuCloudError, selectFlavors } from "../../src/client";
import { defaultFlavors } from "../../src/emulator";
import { fetchCatalog, type FlavorSource, UnknownRegionError } from "../../src/shared/flavor-catalog";

/** A source that records its calls and filters by exact region id, as the emulator does. */
function source(opts: { ignoresRegion?: boolean; refusesUnknown?: boolean } = {}): FlavorSource & { calls: (string | undefined)[] } {
  const calls: (string | undefined)[] = [];
  return {
    calls,
    async listFlavors(regionId?: string): Promise<FlavorRegionGroup[]> {
      calls.push(regionId);
      const all = defaultFlavors() as unknown as FlavorRegionGroup[];
      if (regionId === undefined || opts.ignoresRegion) return all;
      if (opts.refusesUnknown && !all.some((g) => g.products.some((p) => p.region_id === regionId))) {
        throw new GpuCloudError({ operation: "list flavors (GET /flavors)", kind: "not-found", detail: "HTTP 404: no such region" });
      }
      return all.map((g) => ({ ...g, products: g.products.filter((p) => p.region_id === regionId) })).filter((g) => g.products.length > 0);
    },
  };
}

describe("fetchCatalog", () => {
  test("one call per distinct region (case-insensitive), none repeated across filters", async () => {
    const api = source();
    const groups = await fetchCatalog(api, [
      { regionIds: ["norway-east-1", "us-east-1"] },
      { regionId: "NORWAY-EAST-1" },
      { regionIds: ["us-east-1"] },
    ]);
    expect(api.calls).toEqual(["norway-east-1", "us-east-1"]);
    expect(new Set(groups.flatMap((g) => g.products.map((p) => p.region_id)))).toEqual(new Set(["norway-east-1", "us-east-1"]));
  });

  test("a filter without region makes it one call for every region", async () => {
    const api = source();
    await fetchCatalog(api, [{ regionId: "norway-east-1" }, { gpu: "H100" }]);
    expect(api.calls).toEqual([undefined]);
  });

  test("a region id in another case than the API's is found through the full list", async () => {
    const api = source();
    const groups = await fetchCatalog(api, [{ regionId: "Norway-East-1" }]);
    expect(api.calls).toEqual(["Norway-East-1", undefined]);
    expect(selectFlavors(groups, { regionId: "Norway-East-1", gpu: "H100-80G-PCIe", gpuCount: 1, spot: false })[0].id).toBe("no1-h100x1");
  });

  test("an API that ignores region_id still gives the right flavors (filtered client-side)", async () => {
    const api = source({ ignoresRegion: true });
    const groups = await fetchCatalog(api, [{ regionIds: ["canada-central-1", "us-east-1"] }]);
    expect(api.calls).toEqual(["canada-central-1", "us-east-1"]);
    const matched = selectFlavors(groups, { regionIds: ["canada-central-1"] });
    expect(matched.every((f) => f.region_id === "canada-central-1")).toBe(true);
    expect(matched).toHaveLength(10);
  });

  test("an API that refuses an unknown region id (404) is asked for the full list, not trusted blindly", async () => {
    const api = source({ refusesUnknown: true });
    const groups = await fetchCatalog(api, [{ regionId: "US-EAST-1" }]);
    expect(api.calls).toEqual(["US-EAST-1", undefined]);
    expect(selectFlavors(groups, { regionId: "US-EAST-1" })).toHaveLength(9);
    await expect(fetchCatalog(source({ refusesUnknown: true }), [{ regionId: "mars-1" }])).rejects.toThrow(UnknownRegionError);
  });

  test("other API failures are not mistaken for an unknown region", async () => {
    const failing: FlavorSource = {
      listFlavors: async () => {
        throw new GpuCloudError({ operation: "list flavors (GET /flavors)", kind: "server", detail: "HTTP 503" });
      },
    };
    await expect(fetchCatalog(failing, [{ regionId: "us-east-1" }])).rejects.toThrow(/503/);
  });

  test("an unknown region fails with the region ids that exist", async () => {
    const api = source();
    const failure = fetchCatalog(api, [{ regionIds: ["norway-east-1", "mars-1"] }]);
    await expect(failure).rejects.toThrow(UnknownRegionError);
    await expect(fetchCatalog(source(), [{ regionId: "mars-1" }, { gpu: "A100" }])).rejects.toThrow(
      'no region has id "mars-1"; the region ids that exist are: norway-east-1, canada-central-1, us-east-1',
    );
  });
});
