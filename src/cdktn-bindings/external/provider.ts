import type { Construct } from "constructs";

import { AliasOnlyProvider, EXTERNAL_PROVIDER } from "../common";

/** Configuration of the `external` provider (it has none besides the alias). */
export interface ExternalProviderConfig {
  readonly alias?: string;
}

/** The `hashicorp/external` provider block. */
export class ExternalProvider extends AliasOnlyProvider {
  public static readonly tfResourceType = "external";

  public constructor(scope: Construct, id: string, config: ExternalProviderConfig = {}) {
    super(scope, id, EXTERNAL_PROVIDER, config.alias);
  }
}
