/**
 * A run is one `terraform plan` and the apply of that plan. Its **ticket** is what the stack's
 * plan-time read makes once per plan and hands to every script of the run: the create halves
 * (inside {@link PLANNED_ENV}), the reads after the writes and the token-value read (in their
 * query). Terraform carries it in the plan-time read's result, so a saved plan keeps it.
 */
export interface RunTicket {
  /** Random per plan and unguessable: it names the run's private folder (runtime/run/run-folder.ts). */
  readonly id: string;
  /**
   * `plantimestamp()` of the run: the only mark of its run a destroy half can have (a destroy-time
   * provisioner refers to nothing but `self`), so the mark its hand-offs carry (TokenEnv.PLAN_TIME).
   */
  readonly planTime?: string;
  /**
   * The hand-offs (digests of key and release) that already carried this plan time when the read
   * ran, before any provisioner of its run: an earlier run's whose plan fell in the same second.
   * Undefined when the read may have run during the apply, after destroy halves of its own run.
   */
  readonly earlier?: readonly string[];
  /**
   * The accounts the plan read (digests of prefix, API address and credential identity): a script of
   * the apply whose credentials reach another refuses to write. Undefined: not checked.
   */
  readonly accounts?: readonly string[];
}

const DIGESTS = /^[0-9a-f,]*$/;

/** The ticket as one string: `<id>.<earlier>.<accounts>/<planTime>`, lists comma-separated, `-` for an absent one. */
export function encodeRunTicket(ticket: RunTicket): string {
  const list = (values: readonly string[] | undefined) => (values === undefined ? "-" : values.join(","));
  return `${ticket.id}.${list(ticket.earlier)}.${list(ticket.accounts)}/${ticket.planTime ?? ""}`;
}

/** The ticket an {@link encodeRunTicket} string holds; undefined for "" or a string of another form. */
export function decodeRunTicket(text: string | undefined): RunTicket | undefined {
  const match = /^([0-9a-z]{16,64})\.([^./]*)\.([^./]*)\/(.*)$/.exec(text ?? "");
  if (!match) return undefined;
  const list = (value: string): string[] | undefined => {
    if (value === "-" || !DIGESTS.test(value)) return undefined;
    return value === "" ? [] : value.split(",");
  };
  return { id: match[1], earlier: list(match[2]), accounts: list(match[3]), planTime: match[4] || undefined };
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
