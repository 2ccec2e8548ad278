import { hashMapper, stringToTerraform, type TerraformMetaArguments, TerraformResource } from "cdktf";
import type { Construct } from "constructs";

import { metaArguments, NULL_PROVIDER } from "../common";

/** Configuration of a `null_resource`. */
export interface ResourceConfig extends TerraformMetaArguments {
  /** Replaces the resource (re-running its provisioners) whenever a value changes. */
  readonly triggers?: { [key: string]: string };
}

/** A `null_resource` of the `hashicorp/null` provider. */
export class Resource extends TerraformResource {
  public static readonly tfResourceType = "null_resource";

  private _triggers?: { [key: string]: string };

  public constructor(scope: Construct, id: string, config: ResourceConfig = {}) {
    super(scope, id, {
      terraformResourceType: "null_resource",
      terraformGeneratorMetadata: NULL_PROVIDER,
      ...metaArguments(config),
    });
    this._triggers = config.triggers;
  }

  public get id(): string {
    return this.getStringAttribute("id");
  }

  public get triggers(): { [key: string]: string } {
    return this.getStringMapAttribute("triggers");
  }
  public set triggers(value: { [key: string]: string }) {
    this._triggers = value;
  }
  public get triggersInput(): { [key: string]: string } | undefined {
    return this._triggers;
  }

  protected synthesizeAttributes(): { [name: string]: unknown } {
    return { triggers: hashMapper(stringToTerraform)(this._triggers) };
  }
}
