/** Sub-commands of the bundled script. */
export const RuntimeCommand = {
  /** external data source, plan time: list and filter flavors. */
  FLAVORS: "flavors",
  /** external data source, plan time: the cheapest match of the first filter that has one. */
  FLAVOR_PREFERENCE: "flavor-preference",
  /**
   * external data source, one per stack, at plan time and again after the writes (only when
   * some token is being written): every managed token's observation and attributes, and the
   * answer of every lookup of the stack whose query is literal, from one login, one list walk
   * and one catalog read per account and base URL.
   */
  STACK_READ: "stack-read",
  /**
   * `ephemeral "local_command"` (hashicorp/local >= 2.7), one per stack, at plan and at apply:
   * the values of the tokens whose `ephemeralToken` is used, by id, from one list
   * walk per base URL, with the run's shared login (query on stdin and result on stdout as for `stack-read`, see
   * {@link TokenValueField}). The values reach Terraform only as ephemeral values, never the
   * state or a plan file.
   */
  TOKEN_VALUE: "token-value",
  /** local-exec, creation time: adopt, create, rename or update the token. */
  TOKEN_APPLY: "token-apply",
  /** local-exec, destroy time: hand the token to a replacement (an info line; removals are the roster's to report). */
  TOKEN_RELEASE: "token-release",
  /**
   * local-exec, destroy time, of the stack's token roster (`terraform_data`): warns about each
   * token that the stack no longer manages (its ApiToken removed, or the stack destroyed), which
   * stays active since the API has no delete. See {@link RosterEnv}.
   */
  TOKEN_ROSTER_RELEASE: "token-roster-release",
} as const;

export type RuntimeCommandName = (typeof RuntimeCommand)[keyof typeof RuntimeCommand];
