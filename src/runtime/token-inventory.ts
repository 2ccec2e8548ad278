import { ConfigError, envPrefixOf } from "../shared/config";
import { withClient, type RuntimeContext } from "../shared/context";
import { readAppliedRecords, type AppliedRecord } from "./handoff";
import { answerLookups, parseLookup, withLookupsNamed, type StackLookup } from "./stack-lookups";
import { INVENTORY_AFTER_WRITE, INVENTORY_WARNINGS, INVENTORY_WORKSPACE, InventoryQueryField, InventoryResultField, inventoryKey } from "./protocol";
import {
  allTokens,
  duplicatesWarning,
  groupByAccount,
  NO_TOKEN_ATTRIBUTES,
  pickByPreviousNames,
  requireName,
  tokenAttributes,
  tokensNamed,
  type TokenView,
} from "./token-names";

/** One managed token as the stack's inventory query describes it. */
export interface ManagedToken {
  /** Where its fields are in the query and the result (see inventoryKey). */
  readonly slot: string;
  /** The construct's address: the key of its hand-offs and applied records. */
  readonly key: string;
  readonly name: string;
  /** Undefined when the description is not managed. */
  readonly description?: string;
  readonly previousNames: readonly string[];
  readonly baseUrl?: string;
  /** The account's variable prefix; undefined for the default account. */
  readonly envPrefix?: string;
  /** False: the token's value never leaves this process (its `token` field is ""). */
  readonly valueInState: boolean;
}

/** The stack's query split into its managed tokens and its lookups. */
interface StackQuery {
  readonly tokens: ManagedToken[];
  readonly lookups: StackLookup[];
}

/** Splits the flat query (`<key>.<field>`) into one entry per managed token or lookup. */
function parseInventoryQuery(query: Record<string, string>): StackQuery {
  const fields = new Map<string, Map<string, string>>();
  for (const [flatKey, value] of Object.entries(query)) {
    if (flatKey === INVENTORY_AFTER_WRITE || flatKey === INVENTORY_WORKSPACE) continue;
    const dot = flatKey.indexOf(".");
    if (dot <= 0) throw new ConfigError(`query key "${flatKey}" is not of the form <token key>.<field>`);
    const slot = flatKey.slice(0, dot);
    let entry = fields.get(slot);
    if (!entry) fields.set(slot, (entry = new Map()));
    entry.set(flatKey.slice(dot + 1), value);
  }
  const parsed: StackQuery = { tokens: [], lookups: [] };
  for (const [slot, entry] of fields) {
    if (entry.has(InventoryQueryField.LOOKUP)) parsed.lookups.push(parseLookup(slot, entry));
    else parsed.tokens.push(parseToken(slot, entry));
  }
  return parsed;
}

function parseToken(slot: string, entry: ReadonlyMap<string, string>): ManagedToken {
  const previous = [...entry]
    .filter(([field]) => field.startsWith(InventoryQueryField.PREVIOUS_PREFIX))
    .map(([field, value]) => [Number(field.slice(InventoryQueryField.PREVIOUS_PREFIX.length)), value] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([index, value]) => requireName(value, `query.${slot}.previous.${index}`));
  const baseUrl = entry.get(InventoryQueryField.BASE_URL);
  const envPrefix = entry.get(InventoryQueryField.ENV_PREFIX);
  return {
    slot,
    key: entry.get(InventoryQueryField.KEY) || slot,
    name: requireName(entry.get(InventoryQueryField.NAME), `query.${slot}.name`),
    description: entry.get(InventoryQueryField.DESCRIPTION),
    previousNames: previous,
    baseUrl: baseUrl ? baseUrl : undefined,
    envPrefix: envPrefix ? envPrefixOf(envPrefix) : undefined,
    valueInState: entry.get(InventoryQueryField.VALUE_IN_STATE) !== "false",
  };
}

function isLookup(entry: ManagedToken | StackLookup): entry is StackLookup {
  return "kind" in entry;
}

/** The tokens a managed name designates (see tokensNamed), looked up once per managed token. */
type Named = ReturnType<typeof tokensNamed>;

/**
 * The observation of one managed token among the tokens listed from its API. `named`: the tokens
 * its name designates, the one this folder last applied first (it stays the one used among several).
 */
function observe(managed: ManagedToken, tokens: readonly TokenView[], named: Named, warn: (line: string) => void): Record<string, string> {
  const { matches, exact } = named;
  const fields = (t: TokenView | undefined, inSync: boolean, reason: string): Record<string, string> => ({
    ...(t ? tokenAttributes(t) : NO_TOKEN_ATTRIBUTES),
    // The data source's result is stored in the state and in plan files; this token's value is
    // read through its ephemeral value instead.
    ...(managed.valueInState ? {} : { [InventoryResultField.TOKEN]: "" }),
    [InventoryResultField.IN_SYNC]: inSync ? "true" : "false",
    [InventoryResultField.REASON]: reason,
  });
  if (!exact && matches.length > 1) {
    // The apply refuses to choose (see applyToken); the plan shows why it will fail.
    return fields(undefined, false, `${matches.length} API tokens have the name "${managed.name}" after trimming and case-folding`);
  }
  const token = matches[0];
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
 * What a plan must show about one managed token even when everything reads fine: several tokens
 * carry its name, or its name now resolves to another token than the one this folder last applied.
 */
function warningsFor(managed: ManagedToken, tokens: readonly TokenView[], { matches, exact }: Named, last: { id: string; name: string } | undefined): string[] {
  const lines: string[] = [];
  if (matches.length > 1 && !exact) {
    // The apply refuses to choose among these (see applyToken): the stack uses none of them.
    lines.push(
      `${matches.length} API tokens have the name "${managed.name}" after trimming and case-folding, none exactly ` +
        `(ids ${matches.map((t) => t.id).join(", ")}): the apply refuses to choose one. Revoke or rename all but one in the console.`,
    );
  } else if (matches.length > 1) lines.push(duplicatesWarning(managed.name, matches));
  const now = matches[0];
  if (now && last && last.name === managed.name && now.id !== last.id) {
    const old = tokens.find((t) => t.id === last.id);
    const where = old ? `is now named "${old.name}"` : "no longer exists";
    lines.push(
      `API token "${managed.name}" now resolves to id ${now.id}, not to id ${last.id}, which the last apply from this folder managed ` +
        `and which ${where}: the stack's tokenId and token switch to ${now.id}.`,
    );
  }
  return lines;
}

/**
 * Once per stack at plan time (and once more after the writes, when there are any): logs in once
 * per distinct account and base URL, walks its token list once when the stack manages tokens
 * there and reads its flavor catalog once when the stack has lookups there, and returns, for the
 * managed tokens only, their observation and attributes, and each lookup's answer. Other tokens of
 * the account never leave this process. Lookups that fail are reported together, each by its
 * construct's path, after every account was read.
 */
export async function tokenInventory(ctx: RuntimeContext, query: Record<string, string>): Promise<Record<string, string>> {
  const { tokens: managed, lookups } = parseInventoryQuery(query);
  const afterWrite = query[INVENTORY_AFTER_WRITE] === "true";
  const workspace = query[INVENTORY_WORKSPACE];
  const warnings: string[] = [];
  const lookupErrors: string[] = [];
  const result: Record<string, string> = {};
  // What this folder last applied (records, not secrets), when the query names the workspace.
  const applied = new Map<string, AppliedRecord>();
  if (workspace !== undefined && managed.length > 0) {
    for (const r of readAppliedRecords(ctx.cwd)) if (r.workspace === workspace && !r.pending) applied.set(r.key, r);
  }
  for (const group of groupByAccount<ManagedToken | StackLookup>([...managed, ...lookups])) {
    const { baseUrl, envPrefix } = group[0];
    const groupTokens = group.filter((e): e is ManagedToken => !isLookup(e));
    const groupLookups = group.filter(isLookup);
    try {
      await withClient(
        ctx,
        baseUrl,
        async (client) => {
          // The catalog read runs beside the walk: a plan waits for the longer of the two.
          const [tokens, errors] = await Promise.all([
            groupTokens.length > 0 ? allTokens(client, ctx) : undefined,
            answerLookups(client, groupLookups, ctx.out, result),
          ]);
          if (tokens !== undefined) {
            for (const m of groupTokens) observeManaged(ctx, m, tokens, applied.get(m.key), afterWrite, warnings, result);
          }
          lookupErrors.push(...errors);
        },
        envPrefix,
      );
    } catch (err) {
      throw withLookupsNamed(err, groupLookups);
    }
  }
  if (lookupErrors.length > 0) throw new Error(lookupErrors.join("\n"));
  result[INVENTORY_WARNINGS] = warnings.join("\n");
  return result;
}

/** One managed token's fields of the result, and its warnings. */
function observeManaged(
  ctx: RuntimeContext,
  m: ManagedToken,
  tokens: readonly TokenView[],
  last: AppliedRecord | undefined,
  afterWrite: boolean,
  warnings: string[],
  result: Record<string, string>,
): void {
  const named = tokensNamed(tokens, m.name, last?.id);
  const found = warningsFor(m, tokens, named, last);
  for (const line of found) ctx.out.warn(line);
  warnings.push(...found);
  if (afterWrite && named.matches.length === 0) {
    // Not an error: this read also runs at plan time when no write is pending, e.g. in
    // `terraform plan -refresh-only` after the token was deleted in the console, which must
    // show the drift rather than fail. Its attributes are then empty (numbers null); the next
    // plan recreates the token.
    ctx.out.warn(`no API token is named "${m.name}" after the writes: it was removed or renamed outside Terraform; the next plan recreates it`);
  }
  for (const [field, value] of Object.entries(observe(m, tokens, named, ctx.out.warn))) {
    result[inventoryKey(m.slot, field)] = value;
  }
}
