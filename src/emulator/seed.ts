import type { Flavor, FlavorRegionGroup } from "./types";

/**
 * Seed flavors of the emulator. Every product has bandwidth and cycle "hourly"; a "-" in the
 * eph/stock columns means the field is OMITTED from the product (as in the spec's sample).
 *
 * | region (region_id)                 | name                | gpu           | n | price  | cpu | ram  | disk | eph  | stock |
 * |------------------------------------|---------------------|---------------|---|--------|-----|------|------|------|-------|
 * | Norway East (norway-east-1)        | n3-H100x1           | H100          | 1 |  2.89  |  28 |  180 |  100 |  750 | true  |
 * |                                    | n3-H100x2           | H100          | 2 |  5.78  |  56 |  360 |  100 | 1500 | true  |
 * |                                    | n3-H100x4           | H100          | 4 | 11.56  | 112 |  720 |  100 | 3000 | false |
 * |                                    | n3-H100x8           | H100          | 8 | 23.12  | 224 | 1440 |  100 | 6000 | true  |
 * |                                    | n3-H100x1-spot      | H100-spot     | 1 |  1.45  |  28 |  180 |  100 |  750 | true  |
 * |                                    | n3-A100x1           | A100          | 1 |  1.60  |  14 |  120 |  100 |    - | -     |
 * |                                    | n3-A100x2           | A100          | 2 |  3.20  |  28 |  240 |  100 |  800 | false |
 * |                                    | n3-L40Sx1           | L40S          | 1 |  1.10  |  16 |   64 |  100 |    - | -     |
 * |                                    | n3-RTX-A6000x1      | RTX-A6000     | 1 |  0.80  |   8 |   48 |  100 |  200 | true  |
 * | Canada Central (canada-central-1)  | n3-A100x1           | A100          | 1 |  1.70  |  14 |  120 |  100 |  400 | true  |
 * |  (no H100 at all)                  | n3-A100x2           | A100          | 2 |  3.40  |  28 |  240 |  100 |  800 | true  |
 * |                                    | n3-A100x4           | A100          | 4 |  6.80  |  56 |  480 |  100 | 1600 | false |
 * |                                    | n3-A100x8           | A100          | 8 | 13.60  | 112 |  960 |  100 | 3200 | true  |
 * |                                    | n3-A100x1-spot      | A100-spot     | 1 |  0.85  |  14 |  120 |  100 |  400 | true  |
 * |                                    | n3-L40Sx1           | L40S          | 1 |  1.20  |  16 |   64 |  100 |  200 | true  |
 * |                                    | n3-L40Sx2           | L40S          | 2 |  2.40  |  32 |  128 |  100 |    - | -     |
 * |                                    | n3-RTX-A6000x1      | RTX-A6000     | 1 |  0.90  |   8 |   48 |  100 |  200 | true  |
 * |                                    | n3-RTX-A6000x2      | RTX-A6000     | 2 |  1.80  |  16 |   96 |  100 |    - | -     |
 * |                                    | n3-RTX-A6000x4      | RTX-A6000     | 4 |  3.60  |  32 |  192 |  100 |  800 | false |
 * | US East (us-east-1)                | n3-H100x1           | H100          | 1 |  3.15  |  28 |  180 |  100 |  750 | false |
 * |                                    | n3-H100x2           | H100          | 2 |  6.30  |  56 |  360 |  100 | 1500 | true  |
 * |                                    | n3-H100x4           | H100          | 4 | 12.60  | 112 |  720 |  100 | 3000 | true  |
 * |                                    | n3-H100x8           | H100          | 8 | 25.20  | 224 | 1440 |  100 | 6000 | true  |
 * |                                    | n3-H100x8-spot      | H100-spot     | 8 | 12.00  | 224 | 1440 |  100 | 6000 | true  |
 * |                                    | n3-A100x1           | A100          | 1 |  1.75  |  14 |  120 |  100 |    - | -     |
 * |                                    | n3-A100x1-spot      | A100-spot     | 1 |  0.80  |  14 |  120 |  100 |  400 | false |
 * |                                    | n3-L40Sx4           | L40S          | 4 |  4.60  |  64 |  256 |  100 |  800 | true  |
 * |                                    | n3-RTX-A6000x8      | RTX-A6000     | 8 |  6.80  |  64 |  384 |  100 | 1600 | true  |
 *
 * Properties tests rely on:
 * - the cheapest in-stock on-demand (non-spot) H100 is `n3-H100x1` in Norway East (id
 *   `no1-h100x1`, 2.89), unambiguous both within Norway East and across all regions
 *   (US East's single H100 is out of stock; its cheapest in-stock one costs 6.30);
 * - Canada Central has no H100 (on-demand or spot);
 * - flavor names repeat across regions, flavor ids never do.
 */
const REGIONS = [
  { region: "Norway East", id: "norway-east-1", prefix: "no1", bandwidth: "10000 Mbps" },
  { region: "Canada Central", id: "canada-central-1", prefix: "ca1", bandwidth: "5000 Mbps" },
  { region: "US East", id: "us-east-1", prefix: "us1", bandwidth: "10000 Mbps" },
] as const;

/** [gpu, count, price, cpu, ram, ephemeral (null = omit), stock (null = omit)] */
type Row = readonly [string, number, number, number, number, number | null, boolean | null];

const ROWS: readonly (readonly Row[])[] = [
  [
    ["H100", 1, 2.89, 28, 180, 750, true],
    ["H100", 2, 5.78, 56, 360, 1500, true],
    ["H100", 4, 11.56, 112, 720, 3000, false],
    ["H100", 8, 23.12, 224, 1440, 6000, true],
    ["H100-spot", 1, 1.45, 28, 180, 750, true],
    ["A100", 1, 1.6, 14, 120, null, null],
    ["A100", 2, 3.2, 28, 240, 800, false],
    ["L40S", 1, 1.1, 16, 64, null, null],
    ["RTX-A6000", 1, 0.8, 8, 48, 200, true],
  ],
  [
    ["A100", 1, 1.7, 14, 120, 400, true],
    ["A100", 2, 3.4, 28, 240, 800, true],
    ["A100", 4, 6.8, 56, 480, 1600, false],
    ["A100", 8, 13.6, 112, 960, 3200, true],
    ["A100-spot", 1, 0.85, 14, 120, 400, true],
    ["L40S", 1, 1.2, 16, 64, 200, true],
    ["L40S", 2, 2.4, 32, 128, null, null],
    ["RTX-A6000", 1, 0.9, 8, 48, 200, true],
    ["RTX-A6000", 2, 1.8, 16, 96, null, null],
    ["RTX-A6000", 4, 3.6, 32, 192, 800, false],
  ],
  [
    ["H100", 1, 3.15, 28, 180, 750, false],
    ["H100", 2, 6.3, 56, 360, 1500, true],
    ["H100", 4, 12.6, 112, 720, 3000, true],
    ["H100", 8, 25.2, 224, 1440, 6000, true],
    ["H100-spot", 8, 12.0, 224, 1440, 6000, true],
    ["A100", 1, 1.75, 14, 120, null, null],
    ["A100-spot", 1, 0.8, 14, 120, 400, false],
    ["L40S", 4, 4.6, 64, 256, 800, true],
    ["RTX-A6000", 8, 6.8, 64, 384, 1600, true],
  ],
];

/** The seed data: three regions, a fresh deep copy on every call. */
export function defaultFlavors(): FlavorRegionGroup[] {
  return REGIONS.map((r, i) => ({
    region: r.region,
    products: ROWS[i].map(([gpu, count, price, cpu, ram, ephemeral, stock]): Flavor => {
      const spot = gpu.endsWith("-spot");
      const model = spot ? gpu.slice(0, -"-spot".length) : gpu;
      const name = `n3-${model}x${count}${spot ? "-spot" : ""}`;
      return {
        id: `${r.prefix}-${model.toLowerCase()}x${count}${spot ? "-spot" : ""}`,
        name,
        region_name: r.region,
        region_id: r.id,
        price,
        cpu,
        disk: 100,
        ...(ephemeral === null ? {} : { ephemeral }),
        ram,
        gpu,
        gpu_count: count,
        ...(stock === null ? {} : { stock_available: stock }),
        bandwidth: r.bandwidth,
        cycle: "hourly",
      };
    }),
  }));
}
