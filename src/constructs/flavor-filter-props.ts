import type { IResolvable } from "cdktf";

/**
 * What a flavor must be: the filter of `Flavors` and of each choice of `FlavorPreference`.
 * Every prop may be a Terraform expression (a variable, a local); only the props known at
 * synth time are checked then, the rest by the script at plan time.
 *
 * GPU models match on whole leading dash-separated segments, ignoring case and the `-spot`
 * suffix: "H100" matches "H100-80G-SXM5" and "h100-80g-pcie-spot"; "H100-80G" matches
 * "H100-80G-PCIe" but not "H100-94G-NVL"; "H10" matches nothing; a full name such as
 * "H100-80G-PCIe" matches that model only (and models whose names continue it).
 */
export interface FlavorFilterProps {
  /** Only flavors of this region; compared case-insensitively. @default - every region */
  readonly regionId?: string;
  /**
   * Only flavors of these regions (one API call each; compared case-insensitively). Not
   * together with `regionId`. A region id the API does not know fails the plan with the list
   * of region ids that exist. @default - every region
   */
  readonly regionIds?: string[];
  /** GPU model, matched as described on this interface. Not together with `gpus`. @default - any model */
  readonly gpu?: string;
  /** Any of these GPU models, each matched like `gpu`. Not together with `gpu`. @default - any model */
  readonly gpus?: string[];
  /** Exactly this many GPUs. @default - any count */
  readonly gpuCount?: number;
  /** At least this many GPUs. @default - any count */
  readonly minGpuCount?: number;
  /** At least this many CPU cores. @default - any */
  readonly minCpu?: number;
  /** At least this much RAM, in GB. @default - any */
  readonly minRamGb?: number;
  /** At least this large a root disk, in GB. @default - any */
  readonly minDiskGb?: number;
  /**
   * Only flavors the API reports in stock (`stock_available: true`). A flavor whose stock the API
   * does not report is left out, since nothing says it can be had. @default false
   */
  readonly inStockOnly?: boolean | IResolvable;
  /** true: only spot flavors (GPU model with `-spot`); false: no spot flavors. @default - both */
  readonly spot?: boolean | IResolvable;
  /** At most this price per hour, in the API's `price` units. @default - no limit */
  readonly maxPricePerHour?: number;
}
