import { describeFilter, describeOffer, selectFlavors, type FlavorFilter } from "../client/flavor-filter";
import { ConfigError } from "../shared/config";
import { withClient, type RuntimeContext } from "../shared/context";
import { fetchCatalog } from "../shared/flavor-catalog";
import { filterFromQuery, normalizeFlavor, parseCount } from "../shared/flavor-query";
import { flavorChoicePrefix, type FlavorPreferenceQuery, type FlavorPreferenceResult } from "./protocol";

/**
 * Plan-time choice among ordered filters: the cheapest match of the first filter that has one.
 * All choices are read from one catalog fetch (one call per distinct region), so the answer
 * does not depend on the catalog changing between choices.
 */
export async function preferFlavor(ctx: RuntimeContext, query: FlavorPreferenceQuery): Promise<FlavorPreferenceResult> {
  const choices = choicesFromQuery(query);
  const groups = await withClient(ctx, query.base_url, (client) => fetchCatalog(client, choices), query.env_prefix || undefined);
  for (const [index, filter] of choices.entries()) {
    const best = selectFlavors(groups, filter)[0];
    if (best === undefined) continue;
    ctx.out.info(`choice ${index} (${describeFilter(filter)}) matches: ${best.name} (id ${best.id}) in ${best.region_id}`);
    return {
      flavor: JSON.stringify(normalizeFlavor(best)),
      flavor_id: best.id,
      flavor_name: best.name,
      price: String(best.price),
      region_id: best.region_id,
      gpu: best.gpu,
      gpu_count: String(best.gpu_count),
      choice: String(index),
    };
  }
  const lines = choices.map((filter, i) => `choice ${i} (${describeFilter(filter)}): ${describeOffer(groups, filter)}`);
  throw new Error(`no choice of the preference matches:\n${lines.join("\n")}`);
}

function choicesFromQuery(query: FlavorPreferenceQuery): FlavorFilter[] {
  const count = parseCount(query.choice_count, "choice_count");
  if (count === undefined) throw new ConfigError("choice_count is missing: the preference has no choices");
  return Array.from({ length: count }, (_, i) => filterFromQuery(query, flavorChoicePrefix(i)));
}
