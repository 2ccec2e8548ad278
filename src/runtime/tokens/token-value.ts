import { TokenValueField } from "../../protocol";
import { ConfigError, envPrefixOf } from "../../shared/config";
import { type RuntimeContext, withClient } from "../../shared/context";
import { groupByAccount } from "../account-groups";
import { walkAllTokens } from "../names/token-list";

/** One wanted token of the `token-value` query. */
interface WantedToken {
  readonly key: string;
  readonly id: string;
  readonly baseUrl?: string;
  /** The account's variable prefix; undefined for the default account. */
  readonly envPrefix?: string;
}

const FIELDS: readonly string[] = Object.values(TokenValueField);

/** Splits the flat query (`<key>.id`, `<key>.base_url`, `<key>.env_prefix`) into one entry per token. */
function parseValueQuery(query: Record<string, string>): WantedToken[] {
  const byKey = new Map<string, { id?: string; baseUrl?: string; envPrefix?: string }>();
  for (const [flatKey, value] of Object.entries(query)) {
    const dot = flatKey.indexOf(".");
    const field = flatKey.slice(dot + 1);
    if (dot <= 0 || !FIELDS.includes(field)) {
      throw new ConfigError(`query key "${flatKey}" is not of the form <token key>.<${FIELDS.join("|")}>`);
    }
    const key = flatKey.slice(0, dot);
    const entry = byKey.get(key) ?? {};
    if (field === TokenValueField.ID) entry.id = value;
    else if (field === TokenValueField.BASE_URL) entry.baseUrl = value || undefined;
    else entry.envPrefix = value ? envPrefixOf(value) : undefined;
    byKey.set(key, entry);
  }
  return [...byKey].map(([key, entry]) => {
    if (entry.id === undefined || entry.id.trim() === "") {
      throw new ConfigError(`query.${key}.id is required (the API token's id, set by the ApiToken construct)`);
    }
    return { key, id: entry.id, baseUrl: entry.baseUrl, envPrefix: entry.envPrefix };
  });
}

/**
 * The values of the stack's tokens that use `ApiToken.ephemeralToken`, by id, for the stack's one
 * ephemeral `local_command`. The API has no read by id, so this is the plan-time read's list walk (one
 * login and one walk per account and base URL, whatever the number of tokens). The id, not the name,
 * designates a token: the stack's read already chose it, and an id stays the same through a rename.
 */
export async function tokenValues(ctx: RuntimeContext, query: Record<string, string>): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const group of groupByAccount(parseValueQuery(query))) {
    const { baseUrl, envPrefix } = group[0];
    const tokens = await withClient(ctx, baseUrl, (client) => walkAllTokens(client, ctx), envPrefix);
    for (const wanted of group) {
      const token = tokens.find((t) => t.id === wanted.id);
      if (!token) throw new Error(`no API token has the id "${wanted.id}": it was removed outside Terraform; the next plan recreates it`);
      result[wanted.key] = token.token;
    }
  }
  return result;
}
