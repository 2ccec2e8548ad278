import { describeFilter, describeOffer, type FlavorFilter, selectFlavors } from "../../client/flavor-filter";
import type { Flavor, FlavorRegionGroup } from "../../client/schemas";
import type { FlavorQuery, FlavorResult } from "../../protocol";
import { type RuntimeContext, withClient } from "../../shared/context";
import { fetchCatalog } from "../../shared/flavor-catalog";
import { filterFromQuery, normalizeFlavor, parseBool } from "../../shared/flavor-query";

/** Plan-time lookup of every flavor that matches one filter (a Flavors whose query holds an expression). */
export async function findFlavors(ctx: RuntimeContext, query: FlavorQuery): Promise<FlavorResult> {
  const filter = filterFromQuery(query);
  const groups = await withClient(ctx, query.base_url, (client) => fetchCatalog(client, [filter]), query.env_prefix || undefined);
  return answerFlavors(groups, filter, query);
}

/**
 * One Flavors' answer from a catalog read that covers its filter (and possibly others': the
 * stack's read fetches once for all its lookups, and selectFlavors keeps only the filter's regions).
 */
export function answerFlavors(groups: readonly FlavorRegionGroup[], filter: FlavorFilter, query: FlavorQuery): FlavorResult {
  const allowEmpty = parseBool(query.allow_empty, "allow_empty") ?? false;
  const matches = selectFlavors(groups, filter);
  if (matches.length === 0 && !allowEmpty) {
    throw new Error(`no flavor matches (${describeFilter(filter)}). ${describeOffer(groups, filter)}`);
  }
  const cheapest: Flavor | undefined = matches[0];
  return {
    flavors: JSON.stringify(matches.map(normalizeFlavor)),
    ids: JSON.stringify(matches.map((f) => f.id)),
    count: String(matches.length),
    cheapest_id: cheapest?.id ?? "",
    cheapest_name: cheapest?.name ?? "",
    cheapest_price: cheapest ? String(cheapest.price) : "",
    cheapest_region_id: cheapest?.region_id ?? "",
    cheapest_gpu: cheapest?.gpu ?? "",
    cheapest_gpu_count: cheapest ? String(cheapest.gpu_count) : "",
  };
}
