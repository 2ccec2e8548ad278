import type { Construct } from "constructs";

import { AliasOnlyProvider, NULL_PROVIDER } from "../common";

/** Configuration of the `null` provider (it has none besides the alias). */
export interface NullProviderConfig {
  readonly alias?: string;
}

/** The `hashicorp/null` provider block. */
export class NullProvider extends AliasOnlyProvider {
  public static readonly tfResourceType = "null";

  public constructor(scope: Construct, id: string, config: NullProviderConfig = {}) {
    super(scope, id, NULL_PROVIDER, config.alias);
  }
}
