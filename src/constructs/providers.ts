import { ExternalProvider } from "@cdktf/provider-external/lib/provider";
import { NullProvider } from "@cdktf/provider-null/lib/provider";
import { Aspects, type IAspect, TerraformProvider, TerraformStack } from "cdktf";
import type { IConstruct } from "constructs";

import { LocalProvider } from "./local-provider";

type ProviderType = "null" | "external" | "local";

/**
 * cdktf refuses to synthesize a resource whose provider is not declared in the stack. The null
 * and external providers take no configuration, so the library declares them itself unless the
 * stack has a default (unaliased) one, which it then shares.
 *
 * Whether the stack has one is decided at synthesis, not when a construct is created: a user's
 * provider declared after the constructs is found as well as one declared before. The decision
 * runs as an aspect, which cdktf invokes (in `app.synth()` and in `Testing.synth*`) before its
 * provider-presence validation, and it scans the tree once per stack, not once per construct.
 */
class DefaultProviders implements IAspect {
  readonly needed = new Set<ProviderType>();
  private done = false;

  constructor(private readonly stack: TerraformStack) {}

  visit(node: IConstruct): void {
    if (this.done || node !== this.stack) return;
    this.done = true;
    const present = new Set<string>();
    for (const c of this.stack.node.findAll()) {
      if (TerraformProvider.isTerraformProvider(c) && !c.alias) present.add(c.terraformResourceType);
    }
    if (this.needed.has("null") && !present.has("null")) new NullProvider(this.stack, "gpucloud-null");
    if (this.needed.has("external") && !present.has("external")) new ExternalProvider(this.stack, "gpucloud-external");
    if (this.needed.has("local") && !present.has("local")) new LocalProvider(this.stack, "gpucloud-local");
  }
}

const perStack = new WeakMap<TerraformStack, DefaultProviders>();

function ensureProvider(scope: IConstruct, type: ProviderType): void {
  const stack = TerraformStack.of(scope);
  let aspect = perStack.get(stack);
  if (!aspect) {
    aspect = new DefaultProviders(stack);
    perStack.set(stack, aspect);
    Aspects.of(stack).add(aspect);
  }
  aspect.needed.add(type);
}

export function ensureNullProvider(scope: IConstruct): void {
  ensureProvider(scope, "null");
}

export function ensureExternalProvider(scope: IConstruct): void {
  ensureProvider(scope, "external");
}

/** hashicorp/local, for the ephemeral `local_command` behind `ApiToken.ephemeralToken`. */
export function ensureLocalProvider(scope: IConstruct): void {
  ensureProvider(scope, "local");
}
