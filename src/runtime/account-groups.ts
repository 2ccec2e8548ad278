/**
 * Entries grouped by the client they need (account prefix and base URL as configured), in order
 * of first appearance: one login and one list walk per group, whatever the number of tokens.
 */
export function groupByAccount<T extends { readonly envPrefix?: string; readonly baseUrl?: string }>(entries: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const entry of entries) {
    const account = `${entry.envPrefix ?? ""}\n${entry.baseUrl ?? ""}`;
    const group = groups.get(account);
    if (group) group.push(entry);
    else groups.set(account, [entry]);
  }
  return [...groups.values()];
}
