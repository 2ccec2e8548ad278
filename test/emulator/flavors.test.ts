import type { Flavor, FlavorRegionGroup } from "../../src/emulator";
import { defaultFlavors, startEmulator } from "../../src/emulator";
import { call, login, useEmulator } from "./helpers";

const all = (groups: readonly FlavorRegionGroup[]): Flavor[] => groups.flatMap((g) => [...g.products]);
const isSpot = (f: Flavor) => /-spot$/i.test(f.gpu);
const family = (f: Flavor) => f.gpu.split("-")[0].toUpperCase();
const onDemandH100InStock = (fs: readonly Flavor[]) =>
  fs.filter((f) => family(f) === "H100" && !isSpot(f) && f.stock_available === true).sort((a, b) => a.price - b.price);

describe("seed data", () => {
  const seed = defaultFlavors();
  const flavors = all(seed);

  test("three regions with stable ids, unique flavor ids", () => {
    expect(seed.map((g) => g.region)).toEqual(["Norway East", "Canada Central", "US East"]);
    expect([...new Set(flavors.map((f) => f.region_id))]).toEqual(["norway-east-1", "canada-central-1", "us-east-1"]);
    expect(new Set(flavors.map((f) => f.id)).size).toBe(flavors.length);
    for (const g of seed) for (const p of g.products) expect(p.region_name).toBe(g.region);
  });

  test("real-world model names with variants, counts, spot, stock states and omitted fields are all represented", () => {
    const models = new Set(flavors.map((f) => f.gpu.replace(/-spot$/i, "").toUpperCase()));
    expect(models).toEqual(
      new Set([
        "H100-80G-PCIE",
        "H100-80G-SXM5",
        "H100-94G-NVL",
        "A100-80G-PCIE",
        "A100-40G-SXM4",
        "A100-80G-SXM4",
        "L40S-48G",
        "RTX-A6000",
      ]),
    );
    // Some spellings are lower case, as some clouds write them.
    expect(flavors.some((f) => f.gpu === "h100-80g-pcie-spot")).toBe(true);
    expect(flavors.some((f) => !isSpot(f) && f.gpu === f.gpu.toLowerCase())).toBe(true);
    expect(new Set(flavors.map((f) => f.gpu_count))).toEqual(new Set([1, 2, 4, 8]));
    const spot = flavors.filter(isSpot);
    expect(spot.length).toBeGreaterThan(0);
    for (const f of spot) {
      const model = f.gpu.replace(/-spot$/i, "").toLowerCase();
      const base = flavors.find((o) => o.region_id === f.region_id && o.gpu.toLowerCase() === model && o.gpu_count === f.gpu_count);
      expect(base).toBeDefined();
      expect(f.price).toBeLessThan(base!.price);
    }
    expect(flavors.some((f) => f.stock_available === false)).toBe(true);
    const omitted = flavors.filter((f) => !("stock_available" in f) && !("ephemeral" in f));
    expect(omitted.length).toBeGreaterThan(0);
    for (const f of flavors) {
      expect(f.bandwidth).toMatch(/^\d+ Mbps$/);
      expect(f.cycle).toBe("hourly");
      expect(Number.isInteger(f.cpu) && Number.isInteger(f.ram) && Number.isInteger(f.disk)).toBe(true);
    }
  });

  test("cheapest in-stock on-demand H100 is unambiguous; Canada Central has none", () => {
    const norway = onDemandH100InStock(flavors.filter((f) => f.region_id === "norway-east-1"));
    expect(norway[0].id).toBe("no1-h100x1");
    expect(norway[1].price).toBeGreaterThan(norway[0].price);
    const global = onDemandH100InStock(flavors);
    expect(global[0].id).toBe("no1-h100x1");
    expect(global[1].price).toBeGreaterThan(global[0].price);
    expect(norway[0]).toMatchObject({ name: "n3-H100x1", price: 2.89, gpu: "H100-80G-PCIe", gpu_count: 1 });
    expect(flavors.filter((f) => f.region_id === "canada-central-1" && family(f) === "H100")).toEqual([]);
  });

  test("every call returns a fresh copy", () => {
    const a = defaultFlavors();
    (a[0].products as Flavor[]).length = 0;
    expect(defaultFlavors()[0].products.length).toBeGreaterThan(0);
  });
});

describe("GET /flavors", () => {
  const ctx = useEmulator();

  test("without filter returns every region group", async () => {
    const s = await login(ctx.emu);
    const r = await call(ctx.emu, "GET", "/flavors", { headers: s.headers });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe(true);
    expect(r.json.total).toBeUndefined();
    expect(r.json.data).toEqual(defaultFlavors());
  });

  test("region_id filter keeps only that region; empty value means no filter", async () => {
    const s = await login(ctx.emu);
    const r = await call(ctx.emu, "GET", "/flavors?region_id=canada-central-1", { headers: s.headers });
    expect(r.json.data).toHaveLength(1);
    expect(r.json.data[0].region).toBe("Canada Central");
    expect(r.json.data[0].products.every((p: Flavor) => p.region_id === "canada-central-1")).toBe(true);
    expect(r.json.data[0].products.length).toBe(10);
    const empty = await call(ctx.emu, "GET", "/flavors?region_id=", { headers: s.headers });
    expect(empty.json.data).toHaveLength(3);
  });

  test("unknown region → empty array with status true", async () => {
    const s = await login(ctx.emu);
    const r = await call(ctx.emu, "GET", "/flavors?region_id=mars-1", { headers: s.headers });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: true, data: [] });
  });

  test("POST /flavors → 405", async () => {
    const s = await login(ctx.emu);
    const r = await call(ctx.emu, "POST", "/flavors", { headers: s.headers, body: {} });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET");
  });
});

test("custom flavors replace the seed", async () => {
  const custom: FlavorRegionGroup[] = [
    {
      region: "Lab",
      products: [
        {
          id: "lab-1",
          name: "tiny",
          region_name: "Lab",
          region_id: "lab",
          price: 0.1,
          cpu: 1,
          disk: 10,
          ram: 1,
          gpu: "T4",
          gpu_count: 1,
          bandwidth: "100 Mbps",
          cycle: "hourly",
        },
      ],
    },
  ];
  const emu = await startEmulator({ flavors: custom });
  try {
    const s = await login(emu);
    const r = await call(emu, "GET", "/flavors", { headers: s.headers });
    expect(r.json.data).toEqual(custom);
  } finally {
    await emu.close();
  }
});
