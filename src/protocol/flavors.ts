/**
 * The filter part of a flavor query (external data source, all values strings; absent or ""
 * = no filter). Lists are JSON arrays of strings, e.g. `["norway-east-1","us-east-1"]`.
 */
export interface FlavorFilterQuery {
  readonly region_id?: string;
  /** JSON array of region ids. */
  readonly region_ids?: string;
  readonly gpu?: string;
  /** JSON array of GPU models. */
  readonly gpus?: string;
  readonly gpu_count?: string;
  readonly min_gpu_count?: string;
  readonly min_cpu?: string;
  readonly min_ram_gb?: string;
  readonly min_disk_gb?: string;
  /** "true" | "false" */
  readonly in_stock_only?: string;
  /** "true" keeps only spot flavors, "false" excludes them. */
  readonly spot?: string;
  readonly max_price_per_hour?: string;
}

/** Query of `flavors`. */
export interface FlavorQuery extends FlavorFilterQuery {
  /** "true" lets an empty match succeed. */
  readonly allow_empty?: string;
  readonly base_url?: string;
  /** The account's variable prefix; absent for the default account. */
  readonly env_prefix?: string;
}

/** Result of `flavors`; nested data is JSON-encoded, as the external protocol requires. */
export interface FlavorResult {
  /** JSON array of matching flavors, sorted by price then name. */
  readonly flavors: string;
  /** JSON array of the matching ids, same order. */
  readonly ids: string;
  readonly count: string;
  readonly cheapest_id: string;
  readonly cheapest_name: string;
  readonly cheapest_price: string;
  readonly cheapest_region_id: string;
  readonly cheapest_gpu: string;
  readonly cheapest_gpu_count: string;
}

/**
 * Query of `flavor-preference`: the query is a flat map of strings, so choice `i` is written as
 * the keys of a {@link FlavorFilterQuery} prefixed with {@link flavorChoicePrefix}(i), e.g.
 * `choice0_gpu`, `choice1_region_ids`; `choice_count` says how many there are.
 */
export interface FlavorPreferenceQuery {
  readonly choice_count: string;
  readonly base_url?: string;
  /** The account's variable prefix; absent for the default account. */
  readonly env_prefix?: string;
  readonly [choiceKey: string]: string | undefined;
}

/** Prefix of the query keys of choice `index` (0-based). */
export function flavorChoicePrefix(index: number): string {
  return `choice${index}_`;
}

/** Result of `flavor-preference`. */
export interface FlavorPreferenceResult {
  /** The chosen flavor as a JSON object with the API's field names (missing fields null). */
  readonly flavor: string;
  readonly flavor_id: string;
  readonly flavor_name: string;
  readonly price: string;
  readonly region_id: string;
  readonly gpu: string;
  readonly gpu_count: string;
  /** 0-based index of the choice that matched. */
  readonly choice: string;
}
