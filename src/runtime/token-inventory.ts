import { ConfigError } from "../shared/config";
import { withClient, type RuntimeContext } from "../shared/context";
import { INVENTORY_AFTER_WRITE, InventoryQueryField, InventoryResultField, inventoryKey } from "./protocol";
import { allTokens, NO_TOKEN_ATTRIBUTES, pickByName, pickByPreviousNames, requireName, tokenAttributes, type TokenView } from "./token-names";

/** One managed token as the stack's inventory query describes it. */
export interface ManagedToken {
  readonly key: string;
  readonly name: string;
  /** Undefined when the description is not managed. */
  readonly description?: string;
  readonly previousNames: readonly string[];
  readonly baseUrl?: string;
}

/** Splits the flat query (`<key>.<field>`) into one entry per managed token. */
function parseInventoryQuery(query: Record<string, string>): ManagedToken[] {
  const fields = new Map<string, Map<string, string>>();
  for (const [flatKey, value] of Object.entries(query)) {
    if (flatKey === INVENTORY_AFTER_WRITE) continue;
    const dot = flatKey.indexOf(".");
    if (dot <= 0) throw new ConfigError(`query key "${flatKey}" is not of the form <token key>.<field>`);
    const key = flatKey.slice(0, dot);
    let entry = fields.get(key);
    if (!entry) fields.set(key, (entry = new Map()));
    entry.set(flatKey.slice(dot + 1), value);
  }
  return [...fields].map(([key, entry]) => {
    const previous = [...entry]
      .filter(([field]) => field.startsWith(InventoryQueryField.PREVIOUS_PREFIX))
      .map(([field, value]) => [Number(field.slice(InventoryQueryField.PREVIOUS_PREFIX.length)), value] as const)
      .sort((a, b) => a[0] - b[0])
      .map(([index, value]) => requireName(value, `query.${key}.previous.${index}`));
    const baseUrl = entry.get(InventoryQueryField.BASE_URL);
    return {
      key,
      name: requireName(entry.get(InventoryQueryField.NAME), `query.${key}.name`),
      description: entry.get(InventoryQueryField.DESCRIPTION),
      previousNames: previous,
      baseUrl: baseUrl ? baseUrl : undefined,
    };
  });
}

/** The observation of one managed token among the tokens listed from its API. */
function observe(managed: ManagedToken, tokens: readonly TokenView[], warn: (line: string) => void): Record<string, string> {
  const token = pickByName(tokens, managed.name, warn);
  const fields = (t: TokenView | undefined, inSync: boolean, reason: string): Record<string, string> => ({
    ...(t ? tokenAttributes(t) : NO_TOKEN_ATTRIBUTES),
    [InventoryResultField.IN_SYNC]: inSync ? "true" : "false",
    [InventoryResultField.REASON]: reason,
  });
  if (!token) {
    const previous = pickByPreviousNames(tokens, managed.previousNames, warn);
    if (previous) return fields(undefined, false, `rename pending from "${previous.name}" (id ${previous.id})`);
    return fields(undefined, false, `no API token is named "${managed.name}"`);
  }
  if (managed.description !== undefined && (token.description ?? "") !== managed.description) {
    return fields(token, false, `the description of API token "${managed.name}" differs`);
  }
  return fields(token, true, "in sync");
}

/**
 * Once per stack at plan time (and once more after the writes, when there are any): logs in once
 * and walks the token list once per distinct base URL, and returns, for the managed tokens only,
 * their observation and attributes. Other tokens of the account never leave this process.
 */
export async function tokenInventory(ctx: RuntimeContext, query: Record<string, string>): Promise<Record<string, string>> {
  const managed = parseInventoryQuery(query);
  const afterWrite = query[INVENTORY_AFTER_WRITE] === "true";
  const byBaseUrl = new Map<string, ManagedToken[]>();
  for (const m of managed) {
    const group = byBaseUrl.get(m.baseUrl ?? "");
    if (group) group.push(m);
    else byBaseUrl.set(m.baseUrl ?? "", [m]);
  }
  const result: Record<string, string> = {};
  for (const [baseUrl, group] of byBaseUrl) {
    const tokens = await withClient(ctx, baseUrl || undefined, (client) => allTokens(client, ctx));
    for (const m of group) {
      if (afterWrite && !pickByName(tokens, m.name)) {
        // Not an error: this read also runs at plan time when no write is pending, e.g. in
        // `terraform plan -refresh-only` after the token was deleted in the console, which must
        // show the drift rather than fail. Its attributes are then empty (numbers null); the next
        // plan recreates the token.
        ctx.out.warn(`no API token is named "${m.name}" after the writes: it was removed or renamed outside Terraform; the next plan recreates it`);
      }
      for (const [field, value] of Object.entries(observe(m, tokens, ctx.out.warn))) {
        result[inventoryKey(m.key, field)] = value;
      }
    }
  }
  return result;
}
