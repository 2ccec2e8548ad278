import { describeFilter, describeOffer, selectFlavors, type Flavor, type FlavorFilter } from "../client";
import { ConfigError } from "./config";
import { withClient, type RuntimeContext } from "./context";
import type { FlavorQuery, FlavorResult } from "./protocol";

/** The fields every flavor carries in the result, null where the API left one out. */
const FLAVOR_FIELDS = [
  "id",
  "name",
  "region_name",
  "region_id",
  "price",
  "cpu",
  "disk",
  "ephemeral",
  "ram",
  "gpu",
  "gpu_count",
  "stock_available",
  "bandwidth",
  "cycle",
] as const;

/**
 * Plan-time lookup. The result objects all have the same keys (missing documented fields are
 * null), so that `jsondecode` gives Terraform a list it can iterate without type errors.
 */
export async function findFlavors(ctx: RuntimeContext, query: FlavorQuery): Promise<FlavorResult> {
  const filter = filterFromQuery(query);
  const allowEmpty = parseBool(query.allow_empty, "allow_empty") ?? false;

  const groups = await withClient(ctx, query.base_url, (client) => client.listFlavors(filter.regionId));
  const matches = selectFlavors(groups, filter);
  if (matches.length === 0 && !allowEmpty) {
    throw new Error(`no flavor matches (${describeFilter(filter)}). ${describeOffer(groups, filter)}`);
  }
  const normalized = matches.map(normalize);
  const cheapest: Flavor | undefined = matches[0];
  return {
    flavors: JSON.stringify(normalized),
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

function normalize(flavor: Flavor): Record<string, unknown> {
  const source = flavor as unknown as Record<string, unknown>;
  return Object.fromEntries(FLAVOR_FIELDS.map((field) => [field, source[field] ?? null]));
}

export function filterFromQuery(query: FlavorQuery): FlavorFilter {
  const gpuCount = parseCount(query.gpu_count, "gpu_count");
  const minGpuCount = parseCount(query.min_gpu_count, "min_gpu_count");
  const maxPricePerHour = parseNumber(query.max_price_per_hour, "max_price_per_hour");
  if (maxPricePerHour !== undefined && maxPricePerHour <= 0) {
    throw new ConfigError(`max_price_per_hour must be greater than 0, got ${maxPricePerHour}`);
  }
  return {
    regionId: text(query.region_id),
    gpu: text(query.gpu),
    gpuCount,
    minGpuCount,
    inStockOnly: parseBool(query.in_stock_only, "in_stock_only"),
    spot: parseBool(query.spot, "spot"),
    maxPricePerHour,
  };
}

function text(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

function parseBool(value: string | undefined, field: string): boolean | undefined {
  if (value === undefined || value === "") return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new ConfigError(`${field} must be "true" or "false", got "${value}"`);
}

function parseNumber(value: string | undefined, field: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new ConfigError(`${field} must be a number, got "${value}"`);
  return n;
}

function parseCount(value: string | undefined, field: string): number | undefined {
  const n = parseNumber(value, field);
  if (n !== undefined && (!Number.isInteger(n) || n < 1)) {
    throw new ConfigError(`${field} must be a whole number of at least 1, got "${value}"`);
  }
  return n;
}
