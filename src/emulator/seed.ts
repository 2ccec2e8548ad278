import type { Flavor, FlavorRegionGroup } from "./types";

/**
 * Seed flavors of the emulator, named the way GPU clouds name them: dash-separated model
 * segments (family, memory, form factor), a `-spot` suffix for spot, and some spellings in
 * lower case. Every product has bandwidth and cycle "hourly"; a "-" in the eph/stock columns
 * means the field is OMITTED from the product (as in the spec's sample).
 *
 * | region (region_id)                 | id                   | name               | gpu                 | n | price | cpu | ram  | eph  | stock |
 * |------------------------------------|----------------------|--------------------|---------------------|---|-------|-----|------|------|-------|
 * | Norway East (norway-east-1)        | no1-h100x1           | n3-H100x1          | H100-80G-PCIe       | 1 |  2.89 |  28 |  180 |  750 | true  |
 * |                                    | no1-h100x2           | n3-H100x2          | H100-80G-PCIe       | 2 |  5.78 |  56 |  360 | 1500 | true  |
 * |                                    | no1-h100-sxm5x4      | n3-H100-SXM5x4     | H100-80G-SXM5       | 4 | 11.56 | 112 |  720 | 3000 | false |
 * |                                    | no1-h100-sxm5x8      | n3-H100-SXM5x8     | H100-80G-SXM5       | 8 | 23.12 | 224 | 1440 | 6000 | true  |
 * |                                    | no1-h100-nvlx1       | n3-H100-NVLx1      | H100-94G-NVL        | 1 |  3.20 |  32 |  188 |  750 | true  |
 * |                                    | no1-h100x1-spot      | n3-H100x1-spot     | h100-80g-pcie-spot  | 1 |  1.45 |  28 |  180 |  750 | true  |
 * |                                    | no1-a100x1           | n3-A100x1          | A100-80G-PCIe       | 1 |  1.60 |  14 |  120 |    - | -     |
 * |                                    | no1-a100-40gx2       | n3-A100-40Gx2      | A100-40G-SXM4       | 2 |  3.20 |  28 |  240 |  800 | false |
 * |                                    | no1-l40sx1           | n3-L40Sx1          | L40S-48G            | 1 |  1.10 |  16 |   64 |    - | -     |
 * |                                    | no1-rtx-a6000x1      | n3-RTX-A6000x1     | RTX-A6000           | 1 |  0.80 |   8 |   48 |  200 | true  |
 * | Canada Central (canada-central-1)  | ca1-a100x1           | n3-A100x1          | A100-80G-PCIe       | 1 |  1.70 |  14 |  120 |  400 | true  |
 * |  (no H100 at all)                  | ca1-a100x2           | n3-A100x2          | A100-80G-PCIe       | 2 |  3.40 |  28 |  240 |  800 | true  |
 * |                                    | ca1-a100-40gx4       | n3-A100-40Gx4      | A100-40G-SXM4       | 4 |  6.80 |  56 |  480 | 1600 | false |
 * |                                    | ca1-a100-sxm4x8      | n3-A100-SXM4x8     | A100-80G-SXM4       | 8 | 13.60 | 112 |  960 | 3200 | true  |
 * |                                    | ca1-a100x1-spot      | n3-A100x1-spot     | a100-80g-pcie-spot  | 1 |  0.85 |  14 |  120 |  400 | true  |
 * |                                    | ca1-l40sx1           | n3-L40Sx1          | L40S-48G            | 1 |  1.20 |  16 |   64 |  200 | true  |
 * |                                    | ca1-l40sx2           | n3-L40Sx2          | L40S-48G            | 2 |  2.40 |  32 |  128 |    - | -     |
 * |                                    | ca1-rtx-a6000x1      | n3-RTX-A6000x1     | RTX-A6000           | 1 |  0.90 |   8 |   48 |  200 | true  |
 * |                                    | ca1-rtx-a6000x2      | n3-RTX-A6000x2     | RTX-A6000           | 2 |  1.80 |  16 |   96 |    - | -     |
 * |                                    | ca1-rtx-a6000x4      | n3-RTX-A6000x4     | RTX-A6000           | 4 |  3.60 |  32 |  192 |  800 | false |
 * | US East (us-east-1)                | us1-h100x1           | n3-H100x1          | H100-80G-PCIe       | 1 |  3.15 |  28 |  180 |  750 | false |
 * |                                    | us1-h100-sxm5x2      | n3-H100-SXM5x2     | H100-80G-SXM5       | 2 |  6.30 |  56 |  360 | 1500 | true  |
 * |                                    | us1-h100-sxm5x4      | n3-H100-SXM5x4     | H100-80G-SXM5       | 4 | 12.60 | 112 |  720 | 3000 | true  |
 * |                                    | us1-h100-sxm5x8      | n3-H100-SXM5x8     | H100-80G-SXM5       | 8 | 25.20 | 224 | 1440 | 6000 | true  |
 * |                                    | us1-h100-sxm5x8-spot | n3-H100-SXM5x8-spot| H100-80G-SXM5-spot  | 8 | 12.00 | 224 | 1440 | 6000 | true  |
 * |                                    | us1-a100x1           | n3-A100x1          | A100-80G-PCIe       | 1 |  1.75 |  14 |  120 |    - | -     |
 * |                                    | us1-a100x1-spot      | n3-A100x1-spot     | A100-80G-PCIe-spot  | 1 |  0.80 |  14 |  120 |  400 | false |
 * |                                    | us1-l40sx4           | n3-L40Sx4          | L40S-48G            | 4 |  4.60 |  64 |  256 |  800 | true  |
 * |                                    | us1-rtx-a6000x8      | n3-RTX-A6000x8     | rtx-a6000           | 8 |  6.80 |  64 |  384 | 1600 | true  |
 *
 * The root disk is 100 GB, except 200 GB for every 8-GPU flavor. Properties tests rely on:
 * - the cheapest in-stock on-demand (non-spot) H100 is `n3-H100x1` in Norway East (id
 *   `no1-h100x1`, an H100-80G-PCIe, 2.89), unambiguous both within Norway East (next: the
 *   H100-94G-NVL x1 at 3.20) and across all regions (US East's H100 x1 is out of stock; its
 *   cheapest in-stock H100 costs 6.30);
 * - Canada Central has no H100 (on-demand or spot);
 * - `H100` matches three models (PCIe, SXM5, NVL), `H100-80G` two of them, `A100-40G` one;
 * - flavor names repeat across regions, flavor ids never do.
 */
const REGIONS = [
  { region: "Norway East", id: "norway-east-1", prefix: "no1", bandwidth: "10000 Mbps" },
  { region: "Canada Central", id: "canada-central-1", prefix: "ca1", bandwidth: "5000 Mbps" },
  { region: "US East", id: "us-east-1", prefix: "us1", bandwidth: "10000 Mbps" },
] as const;

/**
 * [gpu, short model for name and id, count, price, cpu, ram, ephemeral (null = omit), stock (null = omit)].
 * A spot flavor's name and id end in `-spot`.
 */
type Row = readonly [string, string, number, number, number, number, number | null, boolean | null];

const ROWS: readonly (readonly Row[])[] = [
  [
    ["H100-80G-PCIe", "H100", 1, 2.89, 28, 180, 750, true],
    ["H100-80G-PCIe", "H100", 2, 5.78, 56, 360, 1500, true],
    ["H100-80G-SXM5", "H100-SXM5", 4, 11.56, 112, 720, 3000, false],
    ["H100-80G-SXM5", "H100-SXM5", 8, 23.12, 224, 1440, 6000, true],
    ["H100-94G-NVL", "H100-NVL", 1, 3.2, 32, 188, 750, true],
    ["h100-80g-pcie-spot", "H100", 1, 1.45, 28, 180, 750, true],
    ["A100-80G-PCIe", "A100", 1, 1.6, 14, 120, null, null],
    ["A100-40G-SXM4", "A100-40G", 2, 3.2, 28, 240, 800, false],
    ["L40S-48G", "L40S", 1, 1.1, 16, 64, null, null],
    ["RTX-A6000", "RTX-A6000", 1, 0.8, 8, 48, 200, true],
  ],
  [
    ["A100-80G-PCIe", "A100", 1, 1.7, 14, 120, 400, true],
    ["A100-80G-PCIe", "A100", 2, 3.4, 28, 240, 800, true],
    ["A100-40G-SXM4", "A100-40G", 4, 6.8, 56, 480, 1600, false],
    ["A100-80G-SXM4", "A100-SXM4", 8, 13.6, 112, 960, 3200, true],
    ["a100-80g-pcie-spot", "A100", 1, 0.85, 14, 120, 400, true],
    ["L40S-48G", "L40S", 1, 1.2, 16, 64, 200, true],
    ["L40S-48G", "L40S", 2, 2.4, 32, 128, null, null],
    ["RTX-A6000", "RTX-A6000", 1, 0.9, 8, 48, 200, true],
    ["RTX-A6000", "RTX-A6000", 2, 1.8, 16, 96, null, null],
    ["RTX-A6000", "RTX-A6000", 4, 3.6, 32, 192, 800, false],
  ],
  [
    ["H100-80G-PCIe", "H100", 1, 3.15, 28, 180, 750, false],
    ["H100-80G-SXM5", "H100-SXM5", 2, 6.3, 56, 360, 1500, true],
    ["H100-80G-SXM5", "H100-SXM5", 4, 12.6, 112, 720, 3000, true],
    ["H100-80G-SXM5", "H100-SXM5", 8, 25.2, 224, 1440, 6000, true],
    ["H100-80G-SXM5-spot", "H100-SXM5", 8, 12.0, 224, 1440, 6000, true],
    ["A100-80G-PCIe", "A100", 1, 1.75, 14, 120, null, null],
    ["A100-80G-PCIe-spot", "A100", 1, 0.8, 14, 120, 400, false],
    ["L40S-48G", "L40S", 4, 4.6, 64, 256, 800, true],
    ["rtx-a6000", "RTX-A6000", 8, 6.8, 64, 384, 1600, true],
  ],
];

/** The seed data: three regions, a fresh deep copy on every call. */
export function defaultFlavors(): FlavorRegionGroup[] {
  return REGIONS.map((r, i) => ({
    region: r.region,
    products: ROWS[i].map(([gpu, model, count, price, cpu, ram, ephemeral, stock]): Flavor => {
      const spot = gpu.toLowerCase().endsWith("-spot") ? "-spot" : "";
      return {
        id: `${r.prefix}-${model.toLowerCase()}x${count}${spot}`,
        name: `n3-${model}x${count}${spot}`,
        region_name: r.region,
        region_id: r.id,
        price,
        cpu,
        disk: count === 8 ? 200 : 100,
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
