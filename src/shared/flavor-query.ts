import type { Flavor, FlavorFilter } from "../client";
import type { FlavorFilterQuery } from "../protocol";
import { ConfigError } from "./config";

/** The fields every flavor carries in a result, null where the API left one out. */
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
 * A flavor with exactly the documented fields, missing ones null, so that `jsondecode` gives
 * Terraform objects of one type (a list of them can be iterated without type errors).
 */
export function normalizeFlavor(flavor: Flavor): Record<string, unknown> {
  const source = flavor as unknown as Record<string, unknown>;
  return Object.fromEntries(FLAVOR_FIELDS.map((field) => [field, source[field] ?? null]));
}

/**
 * The filter that a query's keys describe; `prefix` selects one choice of a preference query
 * (and names it in error messages).
 */
export function filterFromQuery(query: FlavorFilterQuery | Readonly<Record<string, string | undefined>>, prefix = ""): FlavorFilter {
  const values = query as Readonly<Record<string, string | undefined>>;
  const get = (key: keyof FlavorFilterQuery) => values[`${prefix}${key}`];
  const name = (key: string) => `${prefix}${key}`;
  const maxPricePerHour = parseNumber(get("max_price_per_hour"), name("max_price_per_hour"));
  if (maxPricePerHour !== undefined && maxPricePerHour <= 0) {
    throw new ConfigError(`${name("max_price_per_hour")} must be greater than 0, got ${maxPricePerHour}`);
  }
  return {
    regionId: text(get("region_id")),
    regionIds: parseList(get("region_ids"), name("region_ids")),
    gpu: text(get("gpu")),
    gpus: parseList(get("gpus"), name("gpus")),
    gpuCount: parseCount(get("gpu_count"), name("gpu_count")),
    minGpuCount: parseCount(get("min_gpu_count"), name("min_gpu_count")),
    minCpu: parseCount(get("min_cpu"), name("min_cpu")),
    minRamGb: parseCount(get("min_ram_gb"), name("min_ram_gb")),
    minDiskGb: parseCount(get("min_disk_gb"), name("min_disk_gb")),
    inStockOnly: parseBool(get("in_stock_only"), name("in_stock_only")),
    spot: parseBool(get("spot"), name("spot")),
    maxPricePerHour,
  };
}

function text(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

export function parseBool(value: string | undefined, field: string): boolean | undefined {
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

export function parseCount(value: string | undefined, field: string): number | undefined {
  const n = parseNumber(value, field);
  if (n !== undefined && (!Number.isInteger(n) || n < 1)) {
    throw new ConfigError(`${field} must be a whole number of at least 1, got "${value}"`);
  }
  return n;
}

/** A JSON array of non-empty strings; an empty array is "no filter" only if absent, else an error. */
function parseList(value: string | undefined, field: string): string[] | undefined {
  // "null": `jsonencode` of a Terraform variable that is null, i.e. no filter.
  if (value === undefined || value === "" || value === "null") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new ConfigError(`${field} must be a JSON array of strings, got "${value}"`);
  }
  if (!Array.isArray(parsed) || parsed.some((v) => typeof v !== "string" || v.trim() === "")) {
    throw new ConfigError(`${field} must be a JSON array of non-empty strings, got ${value}`);
  }
  if (parsed.length === 0) throw new ConfigError(`${field} must name at least one value`);
  return parsed.map((v: string) => v.trim());
}
