import type { ApiClient } from "../../client/client";
import { GpuCloudError } from "../../client/errors";
import { LOGIN_OPERATION } from "../../client/session";
import {
  RetireHandoffs,
  STACK_READ_AFTER_WRITE,
  STACK_READ_LISTED_SLOTS,
  STACK_READ_LOOKUP_ERRORS,
  STACK_READ_RETIRE_HANDOFFS,
  STACK_READ_RUN,
  STACK_READ_RUN_NONCE,
  STACK_READ_WARNINGS,
  STACK_READ_WORKSPACE,
  stackReadKey,
  StackReadQueryField,
  StackReadResultField,
  type StackReadToken,
} from "../../protocol";
import { ConfigError, envPrefixOf } from "../../shared/config";
import { type RuntimeContext, withClient } from "../../shared/context";
import { errorMessage } from "../../shared/error-message";
import { groupByAccount } from "../account-groups";
import { accountRefIn } from "../account-identity";
import { requireName } from "../names/name-input";
import { tokensNamed } from "../names/name-match";
import { duplicatesWarning, pickByPreviousNames } from "../names/name-pick";
import { allTokens, NO_TOKEN_ATTRIBUTES, tokenAttributes, type TokenView } from "../names/token-list";
import { type AppliedRecord, readAppliedRecords } from "../records/applied-record";
import { accountSwitchError, sharedWithWorkspacesWarning } from "../records/applied-record-checks";
import { retireHandoffs } from "../records/handoff";
import { newRunNonce, sweepRunFolder } from "../run/run-folder";
import { takenRunTokens } from "../run/run-walk";
import { answerLookups, lookupLabel, parseLookup, type StackLookup } from "./stack-lookups";

/** One managed token as the stack's query describes it, with where it sits in the query. */
export interface ManagedToken extends StackReadToken {
  /** Where its fields are in the query and the result (see stackReadKey). */
  readonly slot: string;
  /** The construct's path, for messages ("" when the query does not give it). */
  readonly path: string;
}

/** The stack's query split into its managed tokens and its lookups. */
interface StackQuery {
  readonly tokens: ManagedToken[];
  readonly lookups: StackLookup[];
}

/** Query keys of the read itself rather than of a token or lookup. */
const READ_KEYS: ReadonlySet<string> = new Set([
  STACK_READ_AFTER_WRITE,
  STACK_READ_WORKSPACE,
  STACK_READ_RUN,
  STACK_READ_RUN_NONCE,
  STACK_READ_RETIRE_HANDOFFS,
  STACK_READ_LISTED_SLOTS,
]);

/** Splits the flat query (`<key>.<field>`) into one entry per managed token or lookup. */
function parseStackQuery(query: Record<string, string>): StackQuery {
  const fields = new Map<string, Map<string, string>>();
  for (const [flatKey, value] of Object.entries(query)) {
    if (READ_KEYS.has(flatKey)) continue;
    const dot = flatKey.indexOf(".");
    if (dot <= 0) throw new ConfigError(`query key "${flatKey}" is not of the form <token key>.<field>`);
    const slot = flatKey.slice(0, dot);
    let entry = fields.get(slot);
    if (!entry) fields.set(slot, (entry = new Map()));
    entry.set(flatKey.slice(dot + 1), value);
  }
  const parsed: StackQuery = { tokens: [], lookups: [] };
  for (const [slot, entry] of fields) {
    if (entry.has(StackReadQueryField.LOOKUP)) parsed.lookups.push(parseLookup(slot, entry));
    else parsed.tokens.push(parseToken(slot, entry));
  }
  return parsed;
}

function parseToken(slot: string, entry: ReadonlyMap<string, string>): ManagedToken {
  const previous = [...entry]
    .filter(([field]) => field.startsWith(StackReadQueryField.PREVIOUS_PREFIX))
    .map(([field, value]) => [Number(field.slice(StackReadQueryField.PREVIOUS_PREFIX.length)), value] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([index, value]) => requireName(value, `query.${slot}.previous.${index}`));
  const baseUrl = entry.get(StackReadQueryField.BASE_URL);
  const envPrefix = entry.get(StackReadQueryField.ENV_PREFIX);
  return {
    slot,
    key: entry.get(StackReadQueryField.KEY) || slot,
    name: requireName(entry.get(StackReadQueryField.NAME), `query.${slot}.name`),
    description: entry.get(StackReadQueryField.DESCRIPTION),
    previousNames: previous,
    baseUrl: baseUrl ? baseUrl : undefined,
    envPrefix: envPrefix ? envPrefixOf(envPrefix) : undefined,
    path: entry.get(StackReadQueryField.PATH) ?? "",
    valueInState: entry.get(StackReadQueryField.VALUE_IN_STATE) !== "false",
  };
}

function isLookup(entry: ManagedToken | StackLookup): entry is StackLookup {
  return "kind" in entry;
}

/** A construct as error messages name it. */
function readerLabel(entry: ManagedToken | StackLookup): string {
  return isLookup(entry) ? lookupLabel(entry) : `ApiToken "${entry.path || entry.key}"`;
}

/**
 * An error of the stack's read, naming the constructs it concerns: the read is one data source
 * for all of them, so Terraform's own message names none.
 */
class ReadError extends Error {
  constructor(
    err: unknown,
    readonly readers: ReadonlyArray<ManagedToken | StackLookup>,
  ) {
    super(`${errorMessage(err)} (read for ${readers.map(readerLabel).join(", ")})`);
  }
}

/**
 * Whether an error is the account's rather than one operation's: its configuration, its login, its
 * credentials, or the connection (the client logs in on the first request, which may be the token
 * walk's). A list or catalog call that fails or runs out of time after the login is that call's.
 */
function isAccountError(err: unknown): boolean {
  if (err instanceof ConfigError) return true;
  if (!(err instanceof GpuCloudError)) return false;
  return err.operation === LOGIN_OPERATION || err.kind === "auth" || err.kind === "network";
}

/** The tokens a managed name designates (see tokensNamed), looked up once per managed token. */
type Named = ReturnType<typeof tokensNamed>;

/**
 * The observation of one managed token among the tokens listed from its API. `named`: the tokens
 * its name designates, the one this folder last applied first (it stays the one used among several).
 */
function observe(managed: ManagedToken, tokens: readonly TokenView[], named: Named, warn: (line: string) => void): Record<string, string> {
  const { token, inSync, reason } = resolve(managed, tokens, named, warn);
  return {
    ...(token ? tokenAttributes(token) : NO_TOKEN_ATTRIBUTES),
    // The data source's result is stored in the state and in plan files; this token's value is
    // read through its ephemeral value instead.
    ...(managed.valueInState ? {} : { [StackReadResultField.TOKEN]: "" }),
    [StackReadResultField.IN_SYNC]: inSync ? "true" : "false",
    [StackReadResultField.REASON]: reason,
  };
}

/** The token a managed token's fields are taken from (none when several carry its name), and why. */
function resolve(
  managed: ManagedToken,
  tokens: readonly TokenView[],
  named: Named,
  warn: (line: string) => void,
): { readonly token?: TokenView; readonly inSync: boolean; readonly reason: string } {
  const { matches, exact } = named;
  if (!exact && matches.length > 1) {
    // The apply refuses to choose (see applyToken); the plan shows why it will fail.
    return { inSync: false, reason: `${matches.length} API tokens have the name "${managed.name}" after trimming and case-folding` };
  }
  const token = matches[0];
  if (!token) {
    const previous = pickByPreviousNames(tokens, managed.previousNames, warn);
    // Its id and value, known at plan: the rename keeps both (the create half refuses to end on another id).
    if (previous) return { token: previous, inSync: false, reason: `rename pending from "${previous.name}" (id ${previous.id})` };
    return { inSync: false, reason: `no API token is named "${managed.name}"` };
  }
  if (managed.description !== undefined && (token.description ?? "") !== managed.description) {
    return { token, inSync: false, reason: `the description of API token "${managed.name}" differs` };
  }
  return { token, inSync: true, reason: "in sync" };
}

/**
 * What a plan must show about one managed token even when everything reads fine: several tokens
 * carry its name, or its name now resolves to another token than the one this folder last applied.
 */
function warningsFor(
  managed: ManagedToken,
  tokens: readonly TokenView[],
  { matches, exact }: Named,
  last: { id: string; name: string } | undefined,
): string[] {
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
 * construct's path, after every account was read: as the read's error when it serves no token,
 * else in the result (STACK_READ_LOOKUP_ERRORS). Every other error names the constructs it concerns.
 */
export async function stackRead(input: RuntimeContext, query: Record<string, string>): Promise<Record<string, string>> {
  const afterWrite = query[STACK_READ_AFTER_WRITE] === "true";
  const workspace = query[STACK_READ_WORKSPACE];
  // A read after the writes shares the walk and login of the run's provisioners (see ../run/run-folder.ts).
  // The plan-time read keeps its own: it makes the run's nonce, before any script of its run.
  const nonce = afterWrite ? query[STACK_READ_RUN_NONCE] || undefined : undefined;
  const ctx: RuntimeContext = nonce !== undefined && workspace !== undefined ? { ...input, run: { nonce, workspace } } : input;
  const { tokens: managed, lookups } = parseStackQuery(query);
  const warnings: string[] = [];
  // What the user must see even when the read succeeds: in the log, and in the plan's check block
  // (Terraform shows an external program's stderr only when it fails).
  const warnInPlan = (line: string) => {
    ctx.out.warn(line);
    warnings.push(line);
  };
  const lookupErrors: string[] = [];
  const result: Record<string, string> = {};
  const run = query[STACK_READ_RUN] || undefined;
  const retire = query[STACK_READ_RETIRE_HANDOFFS];
  if (!afterWrite && workspace !== undefined && managed.length > 0) {
    const runNonce = newRunNonce(run);
    result[STACK_READ_RUN_NONCE] = runNonce;
    // Before any provisioner of this run: what earlier runs handed off is never taken over now,
    // and their walks and sessions are of no more use.
    // Best effort: a folder that cannot be cleaned is said in the plan, never fails it.
    if (run && retire) retireHandoffs(ctx.cwd, workspace, run, retire === RetireHandoffs.ALL, warnInPlan);
    sweepRunFolder(ctx.env, { cwd: ctx.cwd, workspace, nonce: runNonce }, warnInPlan);
  }
  // What this folder last applied (records, not secrets), when the query names the workspace.
  const applied = new Map<string, AppliedRecord>();
  const otherWorkspaces: AppliedRecord[] = [];
  if (workspace !== undefined && managed.length > 0) {
    // Pending records too: among several tokens of a name, the create half keeps the one a record
    // names, pending or not, and the plan must promise the same id (see refuseOtherThanPlanned).
    for (const r of readAppliedRecords(ctx.cwd)) {
      if (r.workspace === workspace) applied.set(r.key, r);
      else if (!r.pending) otherWorkspaces.push(r);
    }
  }
  const listedSlots = slotsOf(query[STACK_READ_LISTED_SLOTS]);
  for (const group of groupByAccount<ManagedToken | StackLookup>([...managed, ...lookups])) {
    const { baseUrl, envPrefix } = group[0];
    // After the writes of a run: the walk its provisioners took plus what appeared since (one or
    // two requests instead of a walk of the account; back to the oldest token of the listed slots,
    // whose value or last use the stack refers to); a walk when there is no such walk, or when a
    // token of the listed slots was not listed by the API itself (a token renamed through a
    // hand-off, say: the walk keeps neither its value nor its last use).
    const listFor = async (client: ApiClient, tokens: readonly ManagedToken[]): Promise<TokenView[]> => {
      if (!afterWrite) return allTokens(client, ctx);
      const wanted = tokens.filter((m) => listedSlots.has(m.slot));
      const seen = await takenRunTokens(ctx, client, accountRefIn(ctx.env, envPrefix, baseUrl), (walked) =>
        resolvedTokens(wanted, walked, applied),
      );
      return seen !== undefined && resolvedTokens(wanted, seen, applied).every((t) => t.token !== "") ? seen : allTokens(client, ctx);
    };
    const groupTokens = group.filter((e): e is ManagedToken => !isLookup(e));
    const groupLookups = group.filter(isLookup);
    // An account's error concerns every construct reading there; the token walk's own, the tokens; the catalog's, the lookups.
    const named = (err: unknown, part: ReadonlyArray<ManagedToken | StackLookup>) =>
      err instanceof ReadError ? err : new ReadError(err, isAccountError(err) ? group : part);
    try {
      await withClient(
        ctx,
        baseUrl,
        async (client) => {
          // The catalog read runs beside the walk: a plan waits for the longer of the two. Both are
          // waited for, so that a failed walk is never hidden behind the catalog's failure (which,
          // with tokens in the read, would not fail it); each failure names its constructs.
          const [walk, catalog] = await Promise.allSettled([
            groupTokens.length > 0 ? listFor(client, groupTokens) : Promise.resolve(undefined),
            answerLookups(client, groupLookups, ctx.out, result),
          ]);
          if (walk.status === "rejected") {
            throw named(walk.reason, catalog.status === "rejected" && isAccountError(catalog.reason) ? group : groupTokens);
          }
          if (catalog.status === "rejected") throw named(catalog.reason, groupLookups);
          if (walk.value !== undefined) {
            const account = { env: ctx.env, envPrefix, baseUrl };
            for (const m of groupTokens) {
              const last = applied.get(m.key);
              // Before anything is planned on it: credentials that now reach another account fail the plan.
              const switched = afterWrite ? undefined : accountSwitchError(ctx.cwd, last, walk.value, account);
              if (switched !== undefined) throw new ReadError(new Error(switched), [m]);
              observeManaged(ctx, m, walk.value, last, afterWrite, warnInPlan, result);
              const shared = afterWrite
                ? undefined
                : sharedWithWorkspacesWarning(
                    m.name,
                    { id: result[stackReadKey(m.slot, StackReadResultField.ID)] },
                    otherWorkspaces,
                    account,
                  );
              if (shared !== undefined) warnInPlan(shared);
            }
          }
          lookupErrors.push(...catalog.value);
        },
        envPrefix,
      );
    } catch (err) {
      const error = named(err, group);
      // The lookups' alone (an account only they use, their catalog read): with tokens in this read, theirs to report.
      if (managed.length > 0 && error.readers.every(isLookup)) lookupErrors.push(error.message);
      else throw error;
    }
  }
  if (lookupErrors.length > 0) {
    // Without tokens, failing the read is the lookups' own error; with tokens, it would stop a plan of tokens too.
    if (managed.length === 0) throw new Error(lookupErrors.join("\n"));
    result[STACK_READ_LOOKUP_ERRORS] = lookupErrors.join("\n");
  }
  result[STACK_READ_WARNINGS] = warnings.join("\n");
  return result;
}

/** The slots of STACK_READ_LISTED_SLOTS (none when the query has no such key: a plan-time read). */
function slotsOf(list: string | undefined): ReadonlySet<string> {
  return new Set((list ?? "").split(",").filter((slot) => slot !== ""));
}

/**
 * The tokens that `wanted` resolve to in `tokens`. A token taken from the run's walk file has no
 * value (nor last use); one listed by the API always has its value.
 */
function resolvedTokens(
  wanted: readonly ManagedToken[],
  tokens: readonly TokenView[],
  applied: ReadonlyMap<string, AppliedRecord>,
): TokenView[] {
  const quiet = () => undefined;
  return wanted.flatMap((m) => resolve(m, tokens, tokensNamed(tokens, m.name, applied.get(m.key)?.id), quiet).token ?? []);
}

/** One managed token's fields of the result, and its warnings. */
function observeManaged(
  ctx: RuntimeContext,
  m: ManagedToken,
  tokens: readonly TokenView[],
  last: AppliedRecord | undefined,
  afterWrite: boolean,
  warnInPlan: (line: string) => void,
  result: Record<string, string>,
): void {
  const named = tokensNamed(tokens, m.name, last?.id);
  // A pending record is no apply that finished: no "now resolves to another id" from it.
  const found = warningsFor(m, tokens, named, last?.pending ? undefined : last);
  for (const line of found) warnInPlan(line);
  if (afterWrite && named.matches.length === 0) {
    // Not an error: this read also runs at plan time when no write is pending, e.g. in
    // `terraform plan -refresh-only` after the token was deleted in the console, which must
    // show the drift rather than fail. Its attributes are then empty (numbers null); the next
    // plan recreates the token.
    ctx.out.warn(
      `no API token is named "${m.name}" after the writes: it was removed or renamed outside Terraform; the next plan recreates it`,
    );
  }
  for (const [field, value] of Object.entries(observe(m, tokens, named, ctx.out.warn))) {
    result[stackReadKey(m.slot, field)] = value;
  }
}
