import { Fn, type IResolvable, Token } from "cdktf";
import { Construct } from "constructs";

import { flavorChoicePrefix, LookupKind } from "../protocol";
import { type GpuCloudAccount, resolveAccount } from "./account";
import type { FlavorFilterProps } from "./flavor-filter-props";
import { validateFlavorFilter } from "./flavor-filter-validation";
import { filterQuery } from "./flavor-query";
import { lookupField } from "./lookup-read";
import { ensureExternalProvider } from "./providers";
import { terraformLiteral } from "./terraform-literal";
import { TokenRoster } from "./token-roster";
import { checkBaseUrl, isKnown, propError } from "./validation";

export interface FlavorPreferenceProps {
  /**
   * The acceptable flavors, most wanted first; each choice takes the filter props of `Flavors`.
   * The first choice that has a match wins, and within it the cheapest match (then by name).
   */
  readonly choices: FlavorFilterProps[];
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
 * One flavor picked from an ordered list of choices at plan time, e.g. "an in-stock H100 in
 * norway-east-1, else one in us-east-1, else two A100-80G anywhere". The catalog is read once
 * per plan, by the stack's one read, for all its lookups (one API call per distinct region of the
 * choices); if no choice matches, the plan fails with what each choice's regions offer.
 */
export class FlavorPreference extends Construct {
  /** The chosen flavor's id. */
  public readonly flavorId: string;
  /** The chosen flavor's name. */
  public readonly flavorName: string;
  /** The chosen flavor's price per hour. */
  public readonly price: number;
  /** The chosen flavor's region id, as the API spells it. */
  public readonly regionId: string;
  /** The chosen flavor's GPU model as the API spells it (with `-spot` for spot flavors). */
  public readonly gpu: string;
  /** The chosen flavor's number of GPUs. */
  public readonly gpuCount: number;
  /** The 0-based index of the choice that matched. */
  public readonly choice: number;
  /** The chosen flavor as an object with the API's field names (see `Flavors.flavors`). */
  public readonly flavor: IResolvable;

  constructor(scope: Construct, id: string, props: FlavorPreferenceProps) {
    super(scope, id);
    const kind = "FlavorPreference";
    const choices = props?.choices;
    if (!isKnown(choices) || !Array.isArray(choices) || choices.length === 0) {
      throw propError(this, kind, "choices must be a list of at least one filter, written in the program (not a Terraform expression)");
    }
    choices.forEach((choice, i) => validateFlavorFilter(this, kind, choice ?? {}, `choices[${i}].`));
    checkBaseUrl(this, kind, props.baseUrl);
    ensureExternalProvider(this);
    // Keeps the stack's roster block while a lookup remains, so that removing the last ApiToken still warns.
    TokenRoster.of(this);

    const query: Record<string, string> = { choice_count: String(choices.length) };
    choices.forEach((choice, i) => Object.assign(query, filterQuery(choice ?? {}, flavorChoicePrefix(i))));
    const account = resolveAccount(this, "FlavorPreference", props);
    if (account.baseUrl !== undefined) query.base_url = terraformLiteral(account.baseUrl);
    if (account.envPrefixInput !== undefined) query.env_prefix = account.envPrefixInput;

    const field = lookupField(this, LookupKind.FLAVOR_PREFERENCE, query);
    this.flavorId = field("flavor_id");
    this.flavorName = field("flavor_name");
    this.price = Token.asNumber(Fn.tonumber(field("price")));
    this.regionId = field("region_id");
    this.gpu = field("gpu");
    this.gpuCount = Token.asNumber(Fn.tonumber(field("gpu_count")));
    this.choice = Token.asNumber(Fn.tonumber(field("choice")));
    this.flavor = Token.asAny(Fn.jsondecode(field("flavor")));
  }
}
