import { TerraformProvider, stringToTerraform } from "cdktf";
import type { Construct } from "constructs";

/** Configuration of the `external` provider (it has none besides the alias). */
export interface ExternalProviderConfig {
  readonly alias?: string;
}

/** The `hashicorp/external` provider block. */
export class ExternalProvider extends TerraformProvider {
  public static readonly tfResourceType = "external";

  private _alias?: string;

  public constructor(scope: Construct, id: string, config: ExternalProviderConfig = {}) {
    super(scope, id, {
      terraformResourceType: "external",
      terraformGeneratorMetadata: { providerName: "external", providerVersion: "2.3.5", providerVersionConstraint: "~> 2.1" },
      terraformProviderSource: "external",
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
