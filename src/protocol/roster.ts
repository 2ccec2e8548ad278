/**
 * Environment of the roster's destroy-time provisioner ({@link RuntimeCommand.TOKEN_ROSTER_RELEASE}).
 * A destroy-time provisioner sees only `self`, the roster as the last apply left it, and literal
 * values of the configuration it runs under, which is the new one: so it compares the two.
 */
export const RosterEnv = {
  /** `self.input`, a JSON object as text: construct path → {@link RosterEntry}, as last applied. */
  WAS: "GPUCLOUD_ROSTER_WAS",
  /** A literal JSON {@link RosterNow}: the ApiTokens of the configuration being applied. */
  NOW: "GPUCLOUD_ROSTER_NOW",
} as const;

/** One token in the roster's `input`, under its construct path. */
export interface RosterEntry {
  readonly name: string;
  /** The account's variable prefix; absent for the default account. */
  readonly env_prefix?: string;
}

/** The roster of the configuration being applied. */
export interface RosterNow {
  /** The construct paths of its ApiTokens. */
  readonly paths: readonly string[];
  /** Their literal names and previous names: a token under one of them is not removed, only moved. */
  readonly names: readonly string[];
}
