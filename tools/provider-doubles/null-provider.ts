// Double of hashicorp/null v3.2.4 (internal/provider/resource.go and
// internal/planmodifiers/attribute.go; v3.2.2–v3.2.4 are identical there, v3.3.x only changes
// copyright lines), built with terraform-plugin-framework. Only null_resource is provided (the
// deprecated null_data_source is not).
//
// What was matched in the real source:
// - schema: `triggers` map(string) optional with the RequiresReplaceIfValuesNotNull plan
//   modifier (ported literally below); `id` string computed with UseStateForUnknown;
// - Create sets id = fmt.Sprintf("%d", rand.Int()) (a non-negative 63-bit integer);
//   Read and Delete do nothing; Update stores the plan;
// - the resource does not implement ResourceWithImportState, so the framework answers
//   ImportResourceState with "Resource Import Not Implemented" (handled in server.ts).
import { randomBytes } from "node:crypto";

import { type CtyObject, type CtyValue, isObject, knownEqual, Unknown } from "./cty";
import { attrPath, type BlockSpec } from "./protocol";
import type { ManagedResourceDouble, PlanResult, ProviderDouble } from "./server";

export const NULL_PROVIDER_ADDRESS = "registry.terraform.io/hashicorp/null";

const nullResourceSchema: BlockSpec = {
  description: "A resource that does nothing but can be replaced when its triggers change (provider double).",
  attributes: [
    {
      name: "triggers",
      type: ["map", "string"],
      optional: true,
      description: "Arbitrary strings; changing any of them replaces the resource and reruns its provisioners.",
    },
    { name: "id", type: "string", computed: true, description: "Random value chosen at create time." },
  ],
};

/** Like Go's rand.Int() on 64-bit platforms: a non-negative int63, as a decimal string. */
export function randomId(): string {
  return (randomBytes(8).readBigUInt64BE() & 0x7fff_ffff_ffff_ffffn).toString();
}

/**
 * Whether a change of `triggers` from `state` to `config` forces replacement: the real
 * RequiresReplaceIfValuesNotNull, which tolerates keys whose config value is null (the old SDK
 * never stored those). Like the framework, a wholly unknown map has no elements here, so it
 * replaces only when the prior map has keys; otherwise the plan is an in-place update.
 */
export function triggersRequireReplace(state: CtyValue, config: CtyValue): boolean {
  if (knownEqual(config, state)) return false;
  const configMap: CtyObject = isObject(config) ? config : {};
  if (!isObject(state)) {
    // Prior map null: replace only if the config brings a non-null value.
    return Object.values(configMap).some((v) => v !== null);
  }
  for (const [key, value] of Object.entries(configMap)) {
    if (!(key in state) && value === null) continue;
    if (knownEqual(value, state[key] ?? null)) continue;
    return true; // includes unknown values: they cannot be shown equal
  }
  return Object.keys(state).some((key) => !(key in configMap));
}

/** PlanResourceChange for null_resource, for creates and updates (destroys never get here). */
export function planNullResource(prior: CtyValue, proposed: CtyValue): PlanResult {
  if (!isObject(proposed)) throw new Error("proposed new state of null_resource is not an object");
  const triggers = proposed.triggers ?? null;
  if (!isObject(prior)) {
    return { planned: { triggers, id: Unknown } }; // create
  }
  // `triggers` is optional and not computed, so the proposed value is the configured one.
  if (triggersRequireReplace(prior.triggers ?? null, triggers)) {
    return { planned: { triggers, id: Unknown }, requiresReplace: [attrPath("triggers")] };
  }
  // Nothing that matters changed: keep the id (UseStateForUnknown). When triggers are equal
  // this is exactly the prior state, i.e. no change.
  return { planned: { triggers, id: prior.id ?? null } };
}

const nullResource: ManagedResourceDouble = {
  schema: nullResourceSchema,
  plan: ({ prior, proposed }) => planNullResource(prior, proposed),
  apply: ({ prior, planned }) => {
    if (!isObject(planned)) throw new Error("planned state of null_resource is not an object");
    // Create assigns the id; an (in-place) update stores the plan as is.
    return { newState: prior === null ? { ...planned, id: randomId() } : planned };
  },
};

export function nullProvider(): ProviderDouble {
  return {
    address: NULL_PROVIDER_ADDRESS,
    name: "null",
    providerSchema: { attributes: [] },
    resources: { null_resource: nullResource },
    dataSources: {},
  };
}
