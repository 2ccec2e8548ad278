import { isGpuCloudError } from "../client/errors";
import { askedRegions, type FlavorFilter, regionIdsOf, wantedRegions } from "../client/flavor-filter";
import type { FlavorRegionGroup } from "../client/schemas";

/** What the catalog is read from: the client's `listFlavors` (one GET /flavors per call). */
export interface FlavorSource {
  listFlavors(regionId?: string): Promise<FlavorRegionGroup[]>;
}

/** A region id that no product of the API carries, in any case. */
export class UnknownRegionError extends Error {
  constructor(asked: readonly string[], existing: readonly string[]) {
    super(
      `no region has id ${asked.map((r) => `"${r}"`).join(" or ")}; the region ids that exist are: ` +
        (existing.length === 0 ? "none (the API lists no flavors at all)" : existing.join(", ")),
    );
    this.name = "UnknownRegionError";
  }
}

/**
 * The part of the catalog that `filters` can match, with as few calls as possible: one call for
 * every region when some filter names no region, otherwise one call per distinct region id
 * (compared case-insensitively). The API compares `region_id` as it likes, so a region whose
 * call returns none of its products (another case, or a server that only matches exactly), or
 * is refused as invalid or not found (the spec does not say what an unknown region gives), is
 * looked up once in the full list; a region id found nowhere fails with the ids that exist.
 * The groups may overlap (a server that ignores `region_id`); selectFlavors keeps each
 * product once and filters by region itself.
 */
export async function fetchCatalog(source: FlavorSource, filters: readonly FlavorFilter[]): Promise<FlavorRegionGroup[]> {
  // Lower-cased id → the first spelling a filter used (what is sent to the API).
  const asked = new Map<string, string>();
  let everyRegion = filters.length === 0;
  for (const filter of filters) {
    const regions = wantedRegions(filter);
    if (regions === undefined) {
      everyRegion = true;
      continue;
    }
    for (const spelling of askedRegions(filter)) {
      const key = spelling.trim().toLowerCase();
      if (!asked.has(key)) asked.set(key, spelling.trim());
    }
  }

  let full: FlavorRegionGroup[] | undefined;
  const fullList = async () => (full ??= await source.listFlavors());
  const unknown = (ids: string[]) => new UnknownRegionError(ids, regionIdsOf(full ?? []));

  if (everyRegion) {
    const groups = await fullList();
    const known = new Set(regionIdsOf(groups).map((r) => r.toLowerCase()));
    const missing = [...asked].filter(([key]) => !known.has(key)).map(([, spelling]) => spelling);
    if (missing.length > 0) throw unknown(missing);
    return groups;
  }

  const out: FlavorRegionGroup[] = [];
  const missing: string[] = [];
  for (const [key, spelling] of asked) {
    const groups = await listRegion(source, spelling);
    if (offers(groups, key)) {
      out.push(...groups);
      continue;
    }
    const all = await fullList();
    if (offers(all, key)) out.push(...all);
    else missing.push(spelling);
  }
  if (missing.length > 0) {
    await fullList();
    throw unknown(missing);
  }
  return out;
}

/** One region's flavors; a refusal of the region id itself counts as "none of its flavors". */
async function listRegion(source: FlavorSource, regionId: string): Promise<FlavorRegionGroup[]> {
  try {
    return await source.listFlavors(regionId);
  } catch (err) {
    if (isGpuCloudError(err) && (err.kind === "validation" || err.kind === "not-found")) return [];
    throw err;
  }
}

function offers(groups: readonly FlavorRegionGroup[], regionKey: string): boolean {
  return groups.some((g) => g.products.some((p) => p.region_id.toLowerCase() === regionKey));
}
