import { ExternalProvider } from "@cdktf/provider-external/lib/provider";
import { NullProvider } from "@cdktf/provider-null/lib/provider";
import { TerraformProvider, TerraformStack } from "cdktf";
import type { Construct } from "constructs";

/**
 * cdktf refuses to synthesize a resource whose provider is not declared in the stack. The null
 * and external providers take no configuration, so the library declares them itself unless the
 * stack already has a default (unaliased) one, which it then shares.
 */
function ensureProvider(scope: Construct, type: string, create: (stack: TerraformStack) => void): void {
  const stack = TerraformStack.of(scope);
  const present = stack.node
    .findAll()
    .some((c) => TerraformProvider.isTerraformProvider(c) && c.terraformResourceType === type && !c.alias);
  if (!present) create(stack);
}

export function ensureNullProvider(scope: Construct): void {
  ensureProvider(scope, "null", (stack) => new NullProvider(stack, "gpucloud-null"));
}

export function ensureExternalProvider(scope: Construct): void {
  ensureProvider(scope, "external", (stack) => new ExternalProvider(stack, "gpucloud-external"));
}
