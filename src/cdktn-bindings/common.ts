import { stringToTerraform, type TerraformMetaArguments, TerraformProvider, type TerraformProviderGeneratorMetadata } from "cdktf";
import type { Construct } from "constructs";

/** The provider releases the prebuilt cdktf packages are generated from (see README.md). */
export const NULL_PROVIDER: TerraformProviderGeneratorMetadata = {
  providerName: "null",
  providerVersion: "3.2.4",
  providerVersionConstraint: "~> 3.0",
};
export const EXTERNAL_PROVIDER: TerraformProviderGeneratorMetadata = {
  providerName: "external",
  providerVersion: "2.3.5",
  providerVersionConstraint: "~> 2.1",
};

/** The meta-arguments of a resource or data source config, as its base class takes them. */
export function metaArguments(config: TerraformMetaArguments): TerraformMetaArguments {
  return {
    provider: config.provider,
    dependsOn: config.dependsOn,
    count: config.count,
    lifecycle: config.lifecycle,
    provisioners: config.provisioners,
    connection: config.connection,
    forEach: config.forEach,
  };
}

/** A provider block whose only setting is its alias: `null` and `external` have no other. */
export abstract class AliasOnlyProvider extends TerraformProvider {
  private _alias?: string;

  protected constructor(scope: Construct, id: string, provider: TerraformProviderGeneratorMetadata, alias: string | undefined) {
    super(scope, id, {
      terraformResourceType: provider.providerName,
      terraformGeneratorMetadata: provider,
      terraformProviderSource: provider.providerName,
    });
    this._alias = alias;
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
