/**
 * Flavor selection: pure functions over the flavor list (GET /flavors), no I/O.
 *
 * Spot flavors are marked by the suffix `-spot` in `gpu` (spec §2.4), e.g. `L40S-spot`; the
 * GPU *model* is `gpu` without that suffix, so `H100` and `H100-spot` are the same model.
 */
import type { Flavor, FlavorRegionGroup } from "./schemas";

export interface FlavorFilter {
  /** Only flavors of this region (checked on each product's `region_id`, whatever the server filtered). */
  readonly regionId?: string;
  /** GPU model, case-insensitive; a `-spot` suffix is ignored (use `spot` for that). */
  readonly gpu?: string;
  /** Exactly this many GPUs. */
  readonly gpuCount?: number;
  /** At least this many GPUs. */
  readonly minGpuCount?: number;
  /**
   * Only flavors with `stock_available === true`. A product without the field (the spec's
   * samples omit it) has *unknown* stock and is not kept: selecting it could fail at
   * provisioning time, and a caller who asks for stock wants a guarantee, not a guess.
   */
  readonly inStockOnly?: boolean;
  /** true: only spot flavors; false: no spot flavors; undefined: both. */
  readonly spot?: boolean;
  /** Highest acceptable `price` (the spec's price per hour; currency not specified). */
  readonly maxPricePerHour?: number;
}

const SPOT = /-spot/gi;

/** True when `gpu` carries the spot suffix `-spot` (case-insensitive). */
export function isSpotFlavor(flavor: Pick<Flavor, "gpu">): boolean {
  return /-spot/i.test(flavor.gpu);
}

/** The GPU model: `gpu` without `-spot`, e.g. `H100-spot` → `H100`. */
export function gpuModel(flavor: Pick<Flavor, "gpu">): string {
  return stripSpot(flavor.gpu);
}

function stripSpot(gpu: string): string {
  return gpu.replace(SPOT, "").trim();
}

function matches(flavor: Flavor, filter: FlavorFilter): boolean {
  if (filter.regionId !== undefined && flavor.region_id !== filter.regionId) return false;
  if (filter.gpu !== undefined && gpuModel(flavor).toLowerCase() !== stripSpot(filter.gpu).toLowerCase()) return false;
  if (filter.gpuCount !== undefined && flavor.gpu_count !== filter.gpuCount) return false;
  if (filter.minGpuCount !== undefined && flavor.gpu_count < filter.minGpuCount) return false;
  if (filter.inStockOnly === true && flavor.stock_available !== true) return false;
  if (filter.spot !== undefined && isSpotFlavor(flavor) !== filter.spot) return false;
  if (filter.maxPricePerHour !== undefined && !(flavor.price <= filter.maxPricePerHour)) return false;
  return true;
}

function compareFlavors(a: Flavor, b: Flavor): number {
  if (a.price !== b.price) return a.price - b.price;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}

/** All products of all groups that match `filter`, cheapest first (then by name, then id). */
export function selectFlavors(groups: readonly FlavorRegionGroup[], filter: FlavorFilter = {}): Flavor[] {
  const out: Flavor[] = [];
  for (const group of groups) {
    for (const flavor of group.products) {
      if (matches(flavor, filter)) out.push(flavor);
    }
  }
  return out.sort(compareFlavors);
}

/** The filter in words, e.g. `gpu H100, 8 GPUs, in stock, no spot, price <= 3.00`. */
export function describeFilter(filter: FlavorFilter): string {
  const parts: string[] = [];
  if (filter.regionId !== undefined) parts.push(`region id ${filter.regionId}`);
  if (filter.gpu !== undefined) parts.push(`gpu ${filter.gpu}`);
  if (filter.gpuCount !== undefined) parts.push(`${filter.gpuCount} GPU${filter.gpuCount === 1 ? "" : "s"}`);
  if (filter.minGpuCount !== undefined) parts.push(`at least ${filter.minGpuCount} GPUs`);
  if (filter.inStockOnly === true) parts.push("in stock");
  if (filter.spot === true) parts.push("spot only");
  if (filter.spot === false) parts.push("no spot");
  if (filter.maxPricePerHour !== undefined) parts.push(`price <= ${formatPrice(filter.maxPricePerHour)}`);
  return parts.length === 0 ? "any flavor" : parts.join(", ");
}

function formatPrice(price: number): string {
  return Number.isFinite(price) ? price.toFixed(2) : String(price);
}

interface RegionOffer {
  readonly name: string;
  readonly id: string | undefined;
  readonly products: Flavor[];
}

/**
 * What the region(s) offer, for "no flavor matches" errors. With `filter.regionId` only that
 * region is described (or, if it offers nothing, the regions that exist); otherwise all.
 * Example: `region "Norway East" (id r1) offers: A100 x1/x2 from 1.10, H100 x1/x2/x8 from
 * 2.40 (H100 x8 out of stock), L40S-spot x1 from 0.50; 3 products have no stock information`.
 */
export function describeOffer(groups: readonly FlavorRegionGroup[], filter: FlavorFilter = {}): string {
  const regions = collectRegions(groups);
  if (regions.length === 0) return "no region offers any flavor";
  let selected = regions;
  if (filter.regionId !== undefined) {
    selected = regions.filter((r) => r.id === filter.regionId);
    if (selected.length === 0) {
      const known = regions.map((r) => `"${r.name}" (id ${r.id ?? "unknown"})`).join(", ");
      return `no region has id "${filter.regionId}"; regions: ${known}`;
    }
  }
  return selected.map(describeRegion).join("; ");
}

function collectRegions(groups: readonly FlavorRegionGroup[]): RegionOffer[] {
  const byKey = new Map<string, RegionOffer>();
  for (const group of groups) {
    if (group.products.length === 0) {
      const key = `name:${group.region}`;
      if (!byKey.has(key)) byKey.set(key, { name: group.region, id: undefined, products: [] });
      continue;
    }
    for (const product of group.products) {
      const key = `id:${product.region_id}`;
      let region = byKey.get(key);
      if (region === undefined) {
        region = { name: product.region_name || group.region, id: product.region_id, products: [] };
        byKey.set(key, region);
      }
      region.products.push(product);
    }
  }
  return [...byKey.values()];
}

function describeRegion(region: RegionOffer): string {
  const head = `region "${region.name}"${region.id !== undefined ? ` (id ${region.id})` : ""}`;
  if (region.products.length === 0) return `${head} offers no flavors`;
  // Group by model and spot-ness; label with the first spelling seen.
  const models = new Map<string, { label: string; counts: Map<number, Flavor[]>; minPrice: number }>();
  let unknownStock = 0;
  for (const p of region.products) {
    if (p.stock_available === undefined) unknownStock++;
    const key = `${gpuModel(p).toLowerCase()}|${isSpotFlavor(p)}`;
    let model = models.get(key);
    if (model === undefined) {
      model = { label: p.gpu, counts: new Map(), minPrice: p.price };
      models.set(key, model);
    }
    model.minPrice = Math.min(model.minPrice, p.price);
    const list = model.counts.get(p.gpu_count) ?? [];
    list.push(p);
    model.counts.set(p.gpu_count, list);
  }
  const entries = [...models.values()]
    .sort((a, b) => (a.label.toLowerCase() < b.label.toLowerCase() ? -1 : a.label.toLowerCase() > b.label.toLowerCase() ? 1 : 0))
    .map((m) => {
      const counts = [...m.counts.keys()].sort((a, b) => a - b);
      const outOfStock = counts.filter((n) => m.counts.get(n)!.every((p) => p.stock_available === false));
      const note = outOfStock.length > 0 ? ` (${outOfStock.map((n) => `${m.label} x${n}`).join(", ")} out of stock)` : "";
      return `${m.label} ${counts.map((n) => `x${n}`).join("/")} from ${formatPrice(m.minPrice)}${note}`;
    });
  const stockNote =
    unknownStock === 0 ? "" : `; ${unknownStock} product${unknownStock === 1 ? " has" : "s have"} no stock information`;
  return `${head} offers: ${entries.join(", ")}${stockNote}`;
}
