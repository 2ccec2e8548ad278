/**
 * Flavor selection: pure functions over the flavor list (GET /flavors), no I/O.
 *
 * Spot flavors are marked by the suffix `-spot` in `gpu` (spec §2.4), e.g. `L40S-48G-spot`; the
 * GPU *model* is `gpu` without that suffix, so `H100-80G-PCIe` and `h100-80g-pcie-spot` are the
 * same model.
 *
 * GPU clouds name models with dash-separated segments (`H100-80G-SXM5`: family, memory, form
 * factor), so a wanted model matches on whole leading segments: `H100` matches every H100,
 * `H100-80G` the 80 GB ones, `H100-80G-SXM5` exactly that model, and `H10` nothing.
 */
import type { Flavor, FlavorRegionGroup } from "./schemas";

export interface FlavorFilter {
  /**
   * Only flavors of this region, compared case-insensitively with each product's `region_id`
   * (whatever the server filtered). Combined with `regionIds`: either.
   */
  readonly regionId?: string;
  /** Only flavors of these regions (case-insensitive). */
  readonly regionIds?: readonly string[];
  /** GPU model, see {@link gpuMatches}. Combined with `gpus`: either. */
  readonly gpu?: string;
  /** Any of these GPU models, see {@link gpuMatches}. */
  readonly gpus?: readonly string[];
  /** Exactly this many GPUs. */
  readonly gpuCount?: number;
  /** At least this many GPUs. */
  readonly minGpuCount?: number;
  /** At least this many CPU cores (`cpu`). */
  readonly minCpu?: number;
  /** At least this much RAM in GB (`ram`). */
  readonly minRamGb?: number;
  /** At least this large a root disk in GB (`disk`). */
  readonly minDiskGb?: number;
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

/** True when `gpu` carries the spot suffix `-spot` (case-insensitive). */
export function isSpotFlavor(flavor: Pick<Flavor, "gpu">): boolean {
  return /-spot\b/i.test(flavor.gpu);
}

/** The GPU model: `gpu` without `-spot`, e.g. `h100-80g-pcie-spot` → `h100-80g-pcie`. */
export function gpuModel(flavor: Pick<Flavor, "gpu">): string {
  return modelSegments(flavor.gpu, false).join("-");
}

/** The dash-separated segments of a model name without the `spot` marker (lower case if asked). */
function modelSegments(name: string, lowerCase = true): string[] {
  return name
    .split("-")
    .map((s) => s.trim())
    .filter((s) => s !== "" && s.toLowerCase() !== "spot")
    .map((s) => (lowerCase ? s.toLowerCase() : s));
}

/**
 * Whether a flavor's GPU is the wanted model: the wanted name's dash-separated segments equal
 * the leading segments of the flavor's `gpu`, ignoring case and `-spot` on both sides.
 * `H100` and `H100-80G` match `H100-80G-PCIe`; `H100-80G` does not match `H100-94G-NVL`;
 * `H10` matches nothing of those.
 */
export function gpuMatches(flavorGpu: string, wanted: string): boolean {
  const want = modelSegments(wanted);
  const have = modelSegments(flavorGpu);
  if (want.length === 0 || want.length > have.length) return false;
  return want.every((segment, i) => segment === have[i]);
}

/** The region ids a filter names (`regionId`, then `regionIds`), as spelt; empty for every region. */
export function askedRegions(filter: FlavorFilter): string[] {
  return [...(filter.regionId !== undefined ? [filter.regionId] : []), ...(filter.regionIds ?? [])];
}

/** The regions a filter asks for (lower case), or undefined for "every region". */
export function wantedRegions(filter: FlavorFilter): string[] | undefined {
  const all = askedRegions(filter);
  return all.length === 0 ? undefined : [...new Set(all.map((r) => r.trim().toLowerCase()))];
}

/** The GPU models a filter asks for, or undefined for "any model". */
export function wantedGpus(filter: FlavorFilter): string[] | undefined {
  const all = [...(filter.gpu !== undefined ? [filter.gpu] : []), ...(filter.gpus ?? [])];
  return all.length === 0 ? undefined : all;
}

function matches(flavor: Flavor, filter: FlavorFilter, regions: string[] | undefined, gpus: string[] | undefined): boolean {
  if (regions !== undefined && !regions.includes(flavor.region_id.toLowerCase())) return false;
  if (gpus !== undefined && !gpus.some((g) => gpuMatches(flavor.gpu, g))) return false;
  if (filter.gpuCount !== undefined && flavor.gpu_count !== filter.gpuCount) return false;
  if (filter.minGpuCount !== undefined && flavor.gpu_count < filter.minGpuCount) return false;
  if (filter.minCpu !== undefined && flavor.cpu < filter.minCpu) return false;
  if (filter.minRamGb !== undefined && flavor.ram < filter.minRamGb) return false;
  if (filter.minDiskGb !== undefined && flavor.disk < filter.minDiskGb) return false;
  if (filter.inStockOnly === true && flavor.stock_available !== true) return false;
  if (filter.spot !== undefined && isSpotFlavor(flavor) !== filter.spot) return false;
  if (filter.maxPricePerHour !== undefined && !(flavor.price <= filter.maxPricePerHour)) return false;
  return true;
}

/** The order of every flavor list: price, then name, then id. */
export function compareFlavors(a: Flavor, b: Flavor): number {
  if (a.price !== b.price) return a.price - b.price;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}

/**
 * All products of all groups that match `filter`, cheapest first (then by name, then id).
 * A product listed twice (the same id in the same region, e.g. from two region calls that
 * overlap) is kept once.
 */
export function selectFlavors(groups: readonly FlavorRegionGroup[], filter: FlavorFilter = {}): Flavor[] {
  const regions = wantedRegions(filter);
  const gpus = wantedGpus(filter);
  const seen = new Set<string>();
  const out: Flavor[] = [];
  for (const group of groups) {
    for (const flavor of group.products) {
      const key = `${flavor.region_id}\u0000${flavor.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (matches(flavor, filter, regions, gpus)) out.push(flavor);
    }
  }
  return out.sort(compareFlavors);
}

/** The filter in words, e.g. `gpu H100, 8 GPUs, in stock, no spot, price <= 3.00`. */
export function describeFilter(filter: FlavorFilter): string {
  const parts: string[] = [];
  const regions = askedRegions(filter);
  if (regions.length === 1) parts.push(`region id ${regions[0]}`);
  if (regions.length > 1) parts.push(`region ids ${regions.join("/")}`);
  const gpus = wantedGpus(filter);
  if (gpus !== undefined) parts.push(`gpu ${gpus.join("/")}`);
  if (filter.gpuCount !== undefined) parts.push(`${filter.gpuCount} GPU${filter.gpuCount === 1 ? "" : "s"}`);
  if (filter.minGpuCount !== undefined) parts.push(`at least ${filter.minGpuCount} GPUs`);
  if (filter.minCpu !== undefined) parts.push(`at least ${filter.minCpu} CPUs`);
  if (filter.minRamGb !== undefined) parts.push(`at least ${filter.minRamGb} GB RAM`);
  if (filter.minDiskGb !== undefined) parts.push(`at least ${filter.minDiskGb} GB disk`);
  if (filter.inStockOnly === true) parts.push("in stock");
  if (filter.spot === true) parts.push("spot only");
  if (filter.spot === false) parts.push("no spot");
  if (filter.maxPricePerHour !== undefined) parts.push(`price <= ${formatPrice(filter.maxPricePerHour)}`);
  return parts.length === 0 ? "any flavor" : parts.join(", ");
}

export function formatPrice(price: number): string {
  return Number.isFinite(price) ? price.toFixed(2) : String(price);
}

interface RegionOffer {
  readonly name: string;
  readonly id: string | undefined;
  readonly products: Flavor[];
}

/** The region ids the groups' products carry, in order of appearance. */
export function regionIdsOf(groups: readonly FlavorRegionGroup[]): string[] {
  return [...new Set(groups.flatMap((g) => g.products.map((p) => p.region_id)))];
}

/**
 * What the region(s) offer, for "no flavor matches" errors. With regions in the filter only
 * those are described (or, if none of them offers anything, the regions that exist); otherwise
 * all. Example: `region "Norway East" (id r1) offers: A100 x1/x2 from 1.10, H100 x1/x2/x8 from
 * 2.40 (H100 x8 out of stock), L40S-spot x1 from 0.50; 3 products have no stock information`.
 */
export function describeOffer(groups: readonly FlavorRegionGroup[], filter: FlavorFilter = {}): string {
  const regions = collectRegions(groups);
  if (regions.length === 0) return "no region offers any flavor";
  let selected = regions;
  const wanted = wantedRegions(filter);
  if (wanted !== undefined) {
    selected = regions.filter((r) => r.id !== undefined && wanted.includes(r.id.toLowerCase()));
    if (selected.length === 0) {
      const known = regions.map((r) => `"${r.name}" (id ${r.id ?? "unknown"})`).join(", ");
      const asked = askedRegions(filter);
      return `no region has id ${asked.map((r) => `"${r}"`).join(" or ")}; regions: ${known}`;
    }
  }
  return selected.map(describeRegion).join("; ");
}

function collectRegions(groups: readonly FlavorRegionGroup[]): RegionOffer[] {
  const byKey = new Map<string, RegionOffer>();
  const seen = new Set<string>();
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
      if (seen.has(`${key}\u0000${product.id}`)) continue;
      seen.add(`${key}\u0000${product.id}`);
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
  const stockNote = unknownStock === 0 ? "" : `; ${unknownStock} product${unknownStock === 1 ? " has" : "s have"} no stock information`;
  return `${head} offers: ${entries.join(", ")}${stockNote}`;
}
