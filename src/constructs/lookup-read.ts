import { DataExternal } from "@cdktf/provider-external/lib/data-external";
import { ref, TerraformStack, Token } from "cdktf";
import type { Construct } from "constructs";

import { type LookupKindName, stackReadKey } from "../protocol";
import { externalProgram } from "./runtime-script";
import { StackRead } from "./stack-read";
import { isKnown } from "./validation";

/**
 * Where a lookup (Flavors, FlavorPreference) reads its result: returns a field's value (a
 * Terraform string) by the result field's name. A literal query joins the stack's one read, so a
 * steady plan runs one script process and logs in once per account, whatever the number of
 * lookups. A query holding an expression (a variable, a resource's attribute) keeps a
 * `data "external"` of its own, running the lookup's own command: such a value may be unknown
 * until apply, and it must not make the tokens' read (and so their in-sync trigger) unknown at plan.
 */
export function lookupField(scope: Construct, kind: LookupKindName, query: Readonly<Record<string, string>>): (name: string) => string {
  if (Object.values(query).every((value) => isKnown(value))) {
    const results = StackRead.of(scope).addLookup(scope, kind, query);
    const stack = TerraformStack.of(scope);
    const key = scope.node.addr;
    return (name) => Token.asString(ref(`${results}["${stackReadKey(key, name)}"]`, stack));
  }
  const lookup = new DataExternal(scope, "lookup", { program: externalProgram(scope, kind), query: { ...query } });
  return (name) => lookup.result.lookup(name);
}
