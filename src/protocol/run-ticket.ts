/**
 * A run is one `terraform plan` and the apply of that plan. Its **ticket** is what the stack's
 * plan-time read hands to the scripts of the apply: the token writers (in their environment) and
 * the reads after the writes (in their query). Terraform carries it in the plan-time read's
 * result, so a saved plan keeps it. Digests, creation times and ids: nothing secret.
 */
export interface RunTicket {
  /**
   * The accounts the plan read (digests of prefix, API address and credential identity): a script of
   * the apply whose credentials reach another refuses to write. Undefined: not checked.
   */
  readonly accounts?: readonly string[];
  /**
   * Per account digest: where the plan's walk of the account's tokens ended, the newest created_at
   * and the ids at it, from which a read after the writes lists only what is newer (see TokensSinceMark).
   */
  readonly marks?: Readonly<Record<string, { readonly createdAt: number; readonly ids: readonly string[] }>>;
}

/** The ticket as one string (JSON). */
export function encodeRunTicket(ticket: RunTicket): string {
  return JSON.stringify(ticket);
}

/** The ticket an {@link encodeRunTicket} string holds; undefined for "" or a string of another form. */
export function decodeRunTicket(text: string | undefined): RunTicket | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? "");
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
  const { accounts, marks } = parsed as { accounts?: unknown; marks?: unknown };
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");
  if (accounts !== undefined && !strings(accounts)) return undefined;
  const checkedMarks: Record<string, { createdAt: number; ids: string[] }> = {};
  if (marks !== null && typeof marks === "object" && !Array.isArray(marks)) {
    for (const [account, mark] of Object.entries(marks as Record<string, unknown>)) {
      const { createdAt, ids } = (mark ?? {}) as { createdAt?: unknown; ids?: unknown };
      if (typeof createdAt === "number" && Number.isFinite(createdAt) && strings(ids)) checkedMarks[account] = { createdAt, ids };
    }
  }
  return { ...(accounts !== undefined ? { accounts } : {}), marks: checkedMarks };
}
