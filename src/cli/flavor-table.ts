import { type Flavor, formatPrice } from "../client";

const HEADERS = ["REGION", "NAME", "ID", "GPU", "CPU", "RAM", "DISK", "PRICE/H", "STOCK"] as const;

/** One row of the catalog table, e.g. `H100-80G-PCIe x1`, `180 GB`, `2.89`, `yes`. */
function cells(flavor: Flavor): string[] {
  const stock = flavor.stock_available === undefined ? "unknown" : flavor.stock_available ? "yes" : "no";
  return [
    flavor.region_id,
    flavor.name,
    flavor.id,
    `${flavor.gpu} x${flavor.gpu_count}`,
    String(flavor.cpu),
    `${flavor.ram} GB`,
    `${flavor.disk} GB`,
    formatPrice(flavor.price),
    stock,
  ];
}

/** The flavors as a plain-text table with aligned columns (numbers right-aligned), in the given order. */
export function flavorTable(flavors: readonly Flavor[]): string {
  const rows = [[...HEADERS], ...flavors.map(cells)];
  const widths = HEADERS.map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const rightAligned = new Set([4, 5, 6, 7]);
  return rows
    .map((row) =>
      row
        .map((cell, i) => (rightAligned.has(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
