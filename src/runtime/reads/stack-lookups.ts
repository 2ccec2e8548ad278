import type { FlavorFilter } from "../../client/flavor-filter";
import type { FlavorRegionGroup } from "../../client/schemas";
import { LookupKind, type LookupKindName, stackReadKey, StackReadQueryField } from "../../protocol";
import { ConfigError, envPrefixOf } from "../../shared/config";
import { errorMessage } from "../../shared/error-message";
import { fetchCatalog, type FlavorSource, UnknownRegionError } from "../../shared/flavor-catalog";
import { filterFromQuery } from "../../shared/flavor-query";
import type { Output } from "../../shared/output";
import { answerFlavors } from "./flavor-command";
import { answerPreference, choicesFromQuery } from "./preference-command";

/** A Flavors or FlavorPreference that the stack's read answers (see StackReadQueryField.LOOKUP). */
export interface StackLookup {
  readonly key: string;
  readonly kind: LookupKindName;
  /** The construct's path: every error about this lookup starts with it. */
  readonly path: string;
  /** The lookup's own query, as its command would receive it. */
  readonly query: Readonly<Record<string, string>>;
  readonly baseUrl?: string;
  /** The account's variable prefix; undefined for the default account. */
  readonly envPrefix?: string;
}

/** The construct class of each kind, as error messages name it. */
const CONSTRUCT_OF: Readonly<Record<LookupKindName, string>> = {
  [LookupKind.FLAVORS]: "Flavors",
  [LookupKind.FLAVOR_PREFERENCE]: "FlavorPreference",
};

/** One lookup from its fields of the stack's query (`<key>.<field>`, the key taken off). */
export function parseLookup(key: string, fields: ReadonlyMap<string, string>): StackLookup {
  const kind = fields.get(StackReadQueryField.LOOKUP);
  if (kind !== LookupKind.FLAVORS && kind !== LookupKind.FLAVOR_PREFERENCE) {
    throw new ConfigError(
      `query.${key}.${StackReadQueryField.LOOKUP} must be "${LookupKind.FLAVORS}" or "${LookupKind.FLAVOR_PREFERENCE}", got "${kind}"`,
    );
  }
  const query = Object.fromEntries(
    [...fields].filter(([field]) => field !== StackReadQueryField.LOOKUP && field !== StackReadQueryField.PATH),
  );
  const baseUrl = query[StackReadQueryField.BASE_URL];
  const envPrefix = query[StackReadQueryField.ENV_PREFIX];
  return {
    key,
    kind,
    path: fields.get(StackReadQueryField.PATH) ?? key,
    query,
    baseUrl: baseUrl ? baseUrl : undefined,
    envPrefix: envPrefix ? envPrefixOf(envPrefix) : undefined,
  };
}

/** A lookup as error messages name it: its construct class and path. */
export function lookupLabel(lookup: StackLookup): string {
  return `${CONSTRUCT_OF[lookup.kind]} "${lookup.path}"`;
}

function filtersOf(lookup: StackLookup): FlavorFilter[] {
  return lookup.kind === LookupKind.FLAVORS ? [filterFromQuery(lookup.query)] : choicesFromQuery(lookup.query);
}

/**
 * Answers the lookups of one account and base URL from one catalog read for all their filters
 * (one call when some filter names no region, else one per distinct region), into `result` under
 * each lookup's key. Returns one line per failing lookup, naming its construct; an error of the
 * API or the connection itself is thrown as it is. A region id found nowhere fails the shared
 * read; the catalog is then read once more per lookup, to say which lookups asked for it.
 */
export async function answerLookups(
  client: FlavorSource,
  lookups: readonly StackLookup[],
  out: Output,
  result: Record<string, string>,
): Promise<string[]> {
  const errors: string[] = [];
  const fail = (lookup: StackLookup, err: unknown) => errors.push(`${lookupLabel(lookup)}: ${errorMessage(err)}`);
  const asked: Array<{ readonly lookup: StackLookup; readonly filters: FlavorFilter[] }> = [];
  for (const lookup of lookups) {
    try {
      asked.push({ lookup, filters: filtersOf(lookup) });
    } catch (err) {
      fail(lookup, err);
    }
  }
  if (asked.length === 0) return errors;
  let shared: FlavorRegionGroup[] | undefined;
  try {
    shared = await fetchCatalog(
      client,
      asked.flatMap((a) => a.filters),
    );
  } catch (err) {
    if (!(err instanceof UnknownRegionError)) throw err;
  }
  for (const { lookup, filters } of asked) {
    try {
      const groups = shared ?? (await fetchCatalog(client, filters));
      const answer =
        lookup.kind === LookupKind.FLAVORS ? answerFlavors(groups, filters[0], lookup.query) : answerPreference(groups, filters, out);
      for (const [field, value] of Object.entries(answer)) result[stackReadKey(lookup.key, field)] = value;
    } catch (err) {
      fail(lookup, err);
    }
  }
  return errors;
}
