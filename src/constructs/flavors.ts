import { Fn, type IResolvable, Op, Token } from "cdktf";
import { Construct } from "constructs";

import { LookupKind } from "../protocol";
import { type GpuCloudAccount, resolveAccount } from "./account";
import type { FlavorFilterProps } from "./flavor-filter-props";
import { checkBoolean, validateFlavorFilter } from "./flavor-filter-validation";
import { filterQuery, scalarText } from "./flavor-query";
import { lookupField } from "./lookup-read";
import { ensureExternalProvider } from "./providers";
import { terraformLiteral } from "./terraform-literal";
import { TokenRoster } from "./token-roster";
import { checkBaseUrl } from "./validation";

export interface FlavorsProps extends FlavorFilterProps {
  /**
   * When nothing matches, succeed with an empty result instead of failing the plan. The
   * `cheapest*` attributes are then "" (text) and null (numbers). @default false
   */
  readonly allowEmpty?: boolean | IResolvable;
  /**
   * The API's base URL, overriding `GPUCLOUD_BASE_URL` from the environment. Not a secret.
   * @default - the GPUCLOUD_BASE_URL environment variable of the terraform process
   */
  readonly baseUrl?: string;
  /**
   * The account to read with; with it, give baseUrl on the account instead.
   * @default - the default account (GPUCLOUD_* variables)
   */
  readonly account?: GpuCloudAccount;
}

/**
 * The GPU flavors that match a filter, looked up at every plan (by the stack's one read, which
 * reads the catalog once for all its lookups: one API call per region asked for; a filter holding
 * a Terraform expression gets a read of its own) and sorted by price, then name. A filter
 * that matches nothing fails the plan with a message saying what the regions do offer, unless
 * `allowEmpty` is set. To fall back from one filter to another, use `FlavorPreference`.
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
    // Keeps the stack's roster block while a lookup remains, so that removing the last ApiToken still warns.
    TokenRoster.of(this);

    const query: Record<string, string> = filterQuery(props);
    if (props.allowEmpty !== undefined) query.allow_empty = scalarText(props.allowEmpty);
    const account = resolveAccount(this, "Flavors", props);
    if (account.baseUrl !== undefined) query.base_url = terraformLiteral(account.baseUrl);
    if (account.envPrefixInput !== undefined) query.env_prefix = account.envPrefixInput;

    const field = lookupField(this, LookupKind.FLAVORS, query);
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
  validateFlavorFilter(scope, "Flavors", props);
  checkBoolean(scope, "Flavors", props.allowEmpty, "allowEmpty");
  checkBaseUrl(scope, "Flavors", props.baseUrl);
}
