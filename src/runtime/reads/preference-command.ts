import { describeFilter, describeOffer, type FlavorFilter, selectFlavors } from "../../client/flavor-filter";
import type { FlavorRegionGroup } from "../../client/schemas";
import { flavorChoicePrefix, type FlavorPreferenceQuery, type FlavorPreferenceResult } from "../../protocol";
import { ConfigError } from "../../shared/config";
import { type RuntimeContext, withClient } from "../../shared/context";
import { fetchCatalog } from "../../shared/flavor-catalog";
import { filterFromQuery, normalizeFlavor, parseCount } from "../../shared/flavor-query";
import type { Output } from "../../shared/output";

/**
 * Plan-time choice among ordered filters (a FlavorPreference whose query holds an expression):
 * the cheapest match of the first filter that has one.
 */
export async function preferFlavor(ctx: RuntimeContext, query: FlavorPreferenceQuery): Promise<FlavorPreferenceResult> {
  const choices = choicesFromQuery(query);
  const groups = await withClient(ctx, query.base_url, (client) => fetchCatalog(client, choices), query.env_prefix || undefined);
  return answerPreference(groups, choices, ctx.out);
}

/**
 * One preference's answer from one catalog read that covers all its choices, so that the answer
 * does not depend on the catalog changing between choices (the stack's read fetches once for all
 * its lookups).
 */
export function answerPreference(
  groups: readonly FlavorRegionGroup[],
  choices: readonly FlavorFilter[],
  out: Output,
): FlavorPreferenceResult {
  for (const [index, filter] of choices.entries()) {
    const best = selectFlavors(groups, filter)[0];
    if (best === undefined) continue;
    out.info(`choice ${index} (${describeFilter(filter)}) matches: ${best.name} (id ${best.id}) in ${best.region_id}`);
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

export function choicesFromQuery(query: FlavorPreferenceQuery | Readonly<Record<string, string | undefined>>): FlavorFilter[] {
  const count = parseCount(query.choice_count, "choice_count");
  if (count === undefined) throw new ConfigError("choice_count is missing: the preference has no choices");
  return Array.from({ length: count }, (_, i) => filterFromQuery(query, flavorChoicePrefix(i)));
}
