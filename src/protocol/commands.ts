/** Sub-commands of the bundled script. */
export const RuntimeCommand = {
  /** external data source, plan time: list and filter flavors. */
  FLAVORS: "flavors",
  /** external data source, plan time: the cheapest match of the first filter that has one. */
  FLAVOR_PREFERENCE: "flavor-preference",
  /** external data source, one per stack at plan time and one per account after the writes: tokens and literal lookups. */
  STACK_READ: "stack-read",
  /** `ephemeral "local_command"` (hashicorp/local >= 2.7), one per stack: the values `ephemeralToken` hands out, by id ({@link TokenValueField}). */
  TOKEN_VALUE: "token-value",
  /** local-exec, creation time, of the stack's writer of one account: every create, adoption, rename and update of the apply there. */
  TOKEN_WRITER: "token-writer",
  /** local-exec, destroy time, of the stack's token roster: warns about each token left active ({@link RosterEnv}). */
  TOKEN_ROSTER_RELEASE: "token-roster-release",
} as const;

export type RuntimeCommandName = (typeof RuntimeCommand)[keyof typeof RuntimeCommand];
