/**
 * A run is one `terraform plan` and the apply of that plan. Its **ticket** is what the stack's
 * plan-time read makes once per plan and hands to every script of the run: the create halves
 * (inside {@link PLANNED_ENV}), the reads after the writes and the token-value read (in their
 * query). Terraform carries it in the plan-time read's result, so a saved plan keeps it.
 */
export interface RunTicket {
  /**
   * Random per plan and unguessable: it names the run's private folder (runtime/run/run-folder.ts),
   * where the run's scripts share one walk of the token list and one login per account.
   */
  readonly id: string;
  /**
   * `plantimestamp()` of the run: the only mark of its run a destroy half can have (a destroy-time
   * provisioner refers to nothing but `self`), so the mark its hand-offs carry (TokenEnv.PLAN_TIME).
   */
  readonly planTime?: string;
  /**
   * When the read ran (ms since the epoch), given only when it ran while Terraform planned, before
   * any provisioner of its run: a hand-off released before it belongs to an earlier run, even one
   * whose plan fell in the same second. Absent when the read may have run during the apply.
   */
  readonly readAt?: number;
}

/** The ticket as one string: `<id>.<readAt in base 36>/<planTime>` (each optional part may be empty). */
export function encodeRunTicket(ticket: RunTicket): string {
  return `${ticket.id}.${ticket.readAt !== undefined ? ticket.readAt.toString(36) : ""}/${ticket.planTime ?? ""}`;
}

/** The ticket an {@link encodeRunTicket} string holds; undefined for "" or a string of another form. */
export function decodeRunTicket(text: string | undefined): RunTicket | undefined {
  const match = /^([0-9a-z]{16,64})\.([0-9a-z]*)\/(.*)$/.exec(text ?? "");
  if (!match) return undefined;
  const readAt = match[2] !== "" ? parseInt(match[2], 36) : undefined;
  return { id: match[1], planTime: match[3] || undefined, readAt: Number.isSafeInteger(readAt) ? readAt : undefined };
}

/**
 * Environment of the `token-apply` provisioner: what the plan showed it, `<ticket> <planned id>`.
 * The planned id is the id the plan-time read found for the token ("" for a create), which
 * consumers of `tokenId` and `token` were planned with: the create half refuses to write to, or
 * hand over, another token. One value, not one per part: Terraform parses every value of every
 * provisioner at each plan, so each one is paid per token (docs/performance.md).
 */
export const PLANNED_ENV = "GPUCLOUD_TOKEN_PLANNED";

/** What {@link PLANNED_ENV} holds. */
export interface Planned {
  /** Undefined without a ticket: the create half then logs in and walks on its own. */
  readonly ticket?: RunTicket;
  /** "" when the read found no token. */
  readonly id: string;
}

/** The Terraform template of {@link PLANNED_ENV}, from the expressions (text) of the ticket and the planned id. */
export function plannedTemplate(ticketExpression: string, idExpression: string): string {
  return `\${${ticketExpression}} \${${idExpression}}`;
}

/** What a {@link PLANNED_ENV} value (see {@link plannedTemplate}) holds. */
export function decodePlanned(text: string | undefined): Planned {
  const value = text ?? "";
  const space = value.indexOf(" ");
  return {
    ticket: decodeRunTicket(space >= 0 ? value.slice(0, space) : value),
    id: space >= 0 ? value.slice(space + 1) : "",
  };
}
