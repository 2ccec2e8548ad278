import { TerraformProvider, stringToTerraform } from "cdktf";
import type { Construct } from "constructs";

/** Configuration of the `null` provider (it has none besides the alias). */
export interface NullProviderConfig {
  readonly alias?: string;
}

/** The `hashicorp/null` provider block. */
export class NullProvider extends TerraformProvider {
  public static readonly tfResourceType = "null";

  private _alias?: string;

  public constructor(scope: Construct, id: string, config: NullProviderConfig = {}) {
    super(scope, id, {
      terraformResourceType: "null",
      terraformGeneratorMetadata: { providerName: "null", providerVersion: "3.2.4", providerVersionConstraint: "~> 3.0" },
      terraformProviderSource: "null",
    });
    this._alias = config.alias;
  }

  public get alias(): string | undefined {
    return this._alias;
  }
  public set alias(value: string | undefined) {
    this._alias = value;
  }

  protected synthesizeAttributes(): { [name: string]: unknown } {
    return { alias: stringToTerraform(this._alias) };
  }
}
