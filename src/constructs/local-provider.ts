import { TerraformProvider, type TerraformProviderGeneratorMetadata } from "cdktf";
import type { Construct } from "constructs";

/**
 * hashicorp/local: 2.7.0 is the first release with `ephemeral "local_command"` (February 2026);
 * the constraint admits later 2.x releases, which keep it.
 */
export const LOCAL_PROVIDER: TerraformProviderGeneratorMetadata = {
  providerName: "local",
  providerVersion: "2.7.0",
  providerVersionConstraint: ">= 2.7.0, < 3.0.0",
};

/**
 * The `provider "local"` block the library declares when the stack has no unaliased one of its
 * own (see providers.ts). Written by hand: neither cdktf nor CDK Terrain has a prebuilt package
 * with the ephemeral resource, and the provider takes no configuration.
 */
export class LocalProvider extends TerraformProvider {
  constructor(scope: Construct, id: string) {
    super(scope, id, {
      terraformResourceType: LOCAL_PROVIDER.providerName,
      terraformGeneratorMetadata: LOCAL_PROVIDER,
      terraformProviderSource: LOCAL_PROVIDER.providerName,
    });
  }

  protected synthesizeAttributes(): { [name: string]: unknown } {
    return {};
  }
}
