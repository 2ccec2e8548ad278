import { Token } from "cdktf";
import type { Construct } from "constructs";

import type { FlavorFilterProps } from "./flavor-filter-props";
import { isKnown, propError } from "./validation";

/**
 * Checks the props that are known at synth time. `where` names the filter inside the
 * construct's props (e.g. `choices[1].`), "" for the props themselves.
 */
export function validateFlavorFilter(scope: Construct, kind: string, props: FlavorFilterProps, where = ""): void {
  const fail = (message: string) => propError(scope, kind, `${where}${message}`);
  const wholeNumbers = ["gpuCount", "minGpuCount", "minCpu", "minRamGb", "minDiskGb"] as const;
  for (const name of wholeNumbers) {
    const value = props[name];
    if (isKnown(value) && (typeof value !== "number" || !Number.isInteger(value) || value < 1)) {
      throw fail(`${name} must be a whole number of at least 1, got ${String(value)}`);
    }
  }
  if (isKnown(props.gpuCount) && isKnown(props.minGpuCount) && props.gpuCount! < props.minGpuCount!) {
    throw fail(`gpuCount (${props.gpuCount}) is below minGpuCount (${props.minGpuCount}): no flavor could match`);
  }
  const price = props.maxPricePerHour;
  if (isKnown(price) && (typeof price !== "number" || !Number.isFinite(price) || price <= 0)) {
    throw fail(`maxPricePerHour must be a number greater than 0, got ${String(price)}`);
  }
  for (const name of ["regionId", "gpu"] as const) {
    const value = props[name];
    if (isKnown(value) && (typeof value !== "string" || value.trim() === "")) {
      throw fail(`${name} must be a non-empty string when given`);
    }
  }
  for (const [single, list] of [
    ["regionId", "regionIds"],
    ["gpu", "gpus"],
  ] as const) {
    if (props[single] !== undefined && props[list] !== undefined) {
      throw fail(`give ${single} or ${list}, not both`);
    }
    const values = props[list];
    if (!isKnown(values)) continue;
    if (!Array.isArray(values) || values.length === 0) {
      throw fail(`${list} must be a list of at least one ${single} when given`);
    }
    for (const value of values) {
      if (isKnown(value) && (typeof value !== "string" || value.trim() === "")) {
        throw fail(`${list} must contain only non-empty strings, got ${JSON.stringify(value)}`);
      }
    }
  }
  for (const name of ["inStockOnly", "spot"] as const) checkBoolean(scope, kind, props[name], `${where}${name}`);
}

/** A boolean prop: true, false, or a Terraform expression (e.g. `TerraformVariable.booleanValue`). */
export function checkBoolean(scope: Construct, kind: string, value: unknown, name: string): void {
  if (value === undefined || typeof value === "boolean" || Token.isUnresolved(value)) return;
  throw propError(scope, kind, `${name} must be true or false (or a Terraform expression), got ${String(value)}`);
}
