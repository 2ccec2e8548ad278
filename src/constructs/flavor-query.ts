import { Fn, type IResolvable, Token } from "cdktf";

import type { FlavorFilterQuery } from "../protocol";
import type { FlavorFilterProps } from "./flavor-filter-props";
import { terraformLiteral } from "./terraform-literal";
import { isKnown } from "./validation";

/**
 * The query of the external data source is map(string). Values known at synth time are written
 * as text (with `${` and `%{` escaped, so Terraform reads them literally); an expression is wrapped so that Terraform converts it (`tostring`, `jsonencode`),
 * and an expression that is null at plan time drops the key, which means "no filter".
 */
export function filterQuery(props: FlavorFilterProps, prefix = ""): Record<string, string> {
  const query: { -readonly [K in keyof FlavorFilterQuery]: string } = {};
  if (props.regionId !== undefined) query.region_id = terraformLiteral(props.regionId);
  if (props.regionIds !== undefined) query.region_ids = listText(props.regionIds);
  if (props.gpu !== undefined) query.gpu = terraformLiteral(props.gpu);
  if (props.gpus !== undefined) query.gpus = listText(props.gpus);
  if (props.gpuCount !== undefined) query.gpu_count = scalarText(props.gpuCount);
  if (props.minGpuCount !== undefined) query.min_gpu_count = scalarText(props.minGpuCount);
  if (props.minCpu !== undefined) query.min_cpu = scalarText(props.minCpu);
  if (props.minRamGb !== undefined) query.min_ram_gb = scalarText(props.minRamGb);
  if (props.minDiskGb !== undefined) query.min_disk_gb = scalarText(props.minDiskGb);
  if (props.inStockOnly !== undefined) query.in_stock_only = scalarText(props.inStockOnly);
  if (props.spot !== undefined) query.spot = scalarText(props.spot);
  if (props.maxPricePerHour !== undefined) query.max_price_per_hour = scalarText(props.maxPricePerHour);
  return Object.fromEntries(Object.entries(query).map(([key, value]) => [`${prefix}${key}`, value as string]));
}

/** A number or boolean as query text: `String(value)`, or `tostring(<expression>)`. */
export function scalarText(value: number | boolean | IResolvable): string {
  return isKnown(value) ? String(value) : Token.asString(Fn.tostring(value));
}

/** A list of strings as a JSON array, encoded by Terraform if any part is an expression. */
function listText(values: string[]): string {
  if (isKnown(values) && values.every((v) => isKnown(v))) return terraformLiteral(JSON.stringify(values));
  return Token.asString(Fn.jsonencode(values));
}
