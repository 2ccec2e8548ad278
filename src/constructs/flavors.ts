import { DataExternal } from "@cdktf/provider-external/lib/data-external";
import { Fn, Op, Token, type IResolvable } from "cdktf";
import { Construct } from "constructs";
import { RuntimeCommand, type FlavorQuery } from "../runtime/protocol";
import { ensureExternalProvider } from "./providers";
import { externalProgram } from "./runtime-script";
import { checkBaseUrl, isKnown, propError } from "./validation";

export interface FlavorsProps {
  /** Only flavors of this region (passed to the API as `region_id`). @default - every region */
  readonly regionId?: string;
  /**
   * GPU model, matched case-insensitively and ignoring the `-spot` suffix, so "h100" matches
   * both "H100" and "H100-spot" (use `spot` to choose). @default - any model
   */
  readonly gpu?: string;
  /** Exactly this many GPUs. @default - any count */
  readonly gpuCount?: number;
  /** At least this many GPUs. @default - any count */
  readonly minGpuCount?: number;
  /**
   * Only flavors the API reports in stock (`stock_available: true`). A flavor whose stock the API
   * does not report is left out, since nothing says it can be had. @default false
   */
  readonly inStockOnly?: boolean;
  /** true: only spot flavors (GPU model with `-spot`); false: no spot flavors. @default - both */
  readonly spot?: boolean;
  /** At most this price per hour, in the API's `price` units. @default - no limit */
  readonly maxPricePerHour?: number;
  /**
   * When nothing matches, succeed with an empty result instead of failing the plan. The
   * `cheapest*` attributes are then null. @default false
   */
  readonly allowEmpty?: boolean;
  /**
   * The API's base URL, overriding `GPUCLOUD_BASE_URL` from the environment. Not a secret.
   * @default - the GPUCLOUD_BASE_URL environment variable of the terraform process
   */
  readonly baseUrl?: string;
}

/**
 * The GPU flavors that match a filter, looked up at plan time (an external data source, read
 * at every plan) and sorted by price, then name. A filter that matches nothing fails the plan
 * with a message saying what the region does offer, unless `allowEmpty` is set.
 */
export class Flavors extends Construct {
  /**
   * The matching flavors as a list of objects with the API's field names (`id`, `name`,
   * `region_id`, `region_name`, `price`, `cpu`, `ram`, `disk`, `ephemeral`, `gpu`, `gpu_count`,
   * `stock_available`, `bandwidth`, `cycle`); a field the API left out is null.
   */
  public readonly flavors: IResolvable;
  /** The matching flavors' ids, cheapest first. */
  public readonly ids: string[];
  /** How many flavors match. */
  public readonly count: number;
  /** The cheapest match's id. */
  public readonly cheapestId: string;
  /** The cheapest match's name. */
  public readonly cheapestName: string;
  /** The cheapest match's price per hour. */
  public readonly cheapestPrice: number;
  /** The cheapest match's region id. */
  public readonly cheapestRegionId: string;
  /** The cheapest match's GPU model as the API spells it (with `-spot` for spot flavors). */
  public readonly cheapestGpu: string;
  /** The cheapest match's number of GPUs. */
  public readonly cheapestGpuCount: number;

  constructor(scope: Construct, id: string, props: FlavorsProps = {}) {
    super(scope, id);
    validateProps(this, props);
    ensureExternalProvider(this);

    // The query is map(string): numbers known at synth time are written as strings; a token is
    // left for Terraform to convert.
    const numberText = (n: number) => (isKnown(n) ? String(n) : Token.asString(n));
    const query: { -readonly [K in keyof FlavorQuery]: string } = {};
    if (props.regionId !== undefined) query.region_id = props.regionId;
    if (props.gpu !== undefined) query.gpu = props.gpu;
    if (props.gpuCount !== undefined) query.gpu_count = numberText(props.gpuCount);
    if (props.minGpuCount !== undefined) query.min_gpu_count = numberText(props.minGpuCount);
    if (props.inStockOnly !== undefined) query.in_stock_only = String(props.inStockOnly);
    if (props.spot !== undefined) query.spot = String(props.spot);
    if (props.maxPricePerHour !== undefined) query.max_price_per_hour = numberText(props.maxPricePerHour);
    if (props.allowEmpty !== undefined) query.allow_empty = String(props.allowEmpty);
    if (props.baseUrl !== undefined) query.base_url = props.baseUrl;

    const lookup = new DataExternal(this, "lookup", {
      program: externalProgram(this, RuntimeCommand.FLAVORS),
      query,
    });
    const field = (name: string) => lookup.result.lookup(name);
    // With allowEmpty and no match the text fields are "" and the numbers null, not a failed
    // tonumber(""). (Tested as length < 1: cdktf renders the literals "" and 0 as `undefined`.)
    const numberOrNull = (name: string) =>
      Token.asNumber(Fn.conditional(Op.lt(Fn.lengthOf(field(name)), 1), Token.nullValue(), Fn.tonumber(field(name))));

    this.flavors = Token.asAny(Fn.jsondecode(field("flavors")));
    this.ids = Token.asList(Fn.jsondecode(field("ids")));
    this.count = Token.asNumber(Fn.tonumber(field("count")));
    this.cheapestId = field("cheapest_id");
    this.cheapestName = field("cheapest_name");
    this.cheapestPrice = numberOrNull("cheapest_price");
    this.cheapestRegionId = field("cheapest_region_id");
    this.cheapestGpu = field("cheapest_gpu");
    this.cheapestGpuCount = numberOrNull("cheapest_gpu_count");
  }
}

function validateProps(scope: Construct, props: FlavorsProps): void {
  const kind = "Flavors";
  const count = (name: "gpuCount" | "minGpuCount") => {
    const value = props[name];
    if (isKnown(value) && (typeof value !== "number" || !Number.isInteger(value) || value < 1)) {
      throw propError(scope, kind, `${name} must be a whole number of at least 1, got ${String(value)}`);
    }
  };
  count("gpuCount");
  count("minGpuCount");
  if (isKnown(props.gpuCount) && isKnown(props.minGpuCount) && props.gpuCount! < props.minGpuCount!) {
    throw propError(
      scope,
      kind,
      `gpuCount (${props.gpuCount}) is below minGpuCount (${props.minGpuCount}): no flavor could match`,
    );
  }
  const price = props.maxPricePerHour;
  if (isKnown(price) && (typeof price !== "number" || !Number.isFinite(price) || price <= 0)) {
    throw propError(scope, kind, `maxPricePerHour must be a number greater than 0, got ${String(price)}`);
  }
  for (const name of ["regionId", "gpu"] as const) {
    const value = props[name];
    if (isKnown(value) && (typeof value !== "string" || value.trim() === "")) {
      throw propError(scope, kind, `${name} must be a non-empty string when given`);
    }
  }
  for (const name of ["inStockOnly", "spot", "allowEmpty"] as const) {
    const value = props[name];
    if (value !== undefined && typeof value !== "boolean") {
      throw propError(scope, kind, `${name} must be true or false, got ${String(value)}`);
    }
  }
  checkBaseUrl(scope, kind, props.baseUrl);
}
