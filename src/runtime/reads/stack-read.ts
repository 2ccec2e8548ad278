import type { ApiClient } from "../../client/client";
import {
  accountEnv,
  decodeRunTicket,
  DEFAULT_ENV_PREFIX,
  encodeLedger,
  encodeRunTicket,
  foldTokenName,
  type LedgerAccount,
  ledgerAccountKey,
  type LedgerToken,
  sameLedgerAccount,
  STACK_READ_AFTER_WRITE,
  STACK_READ_LEDGER,
  STACK_READ_LOOKUP_ERRORS,
  STACK_READ_NEW_SLOTS,
  STACK_READ_TICKET,
  STACK_READ_WARNINGS,
  STACK_READ_WORKSPACE,
} from "../../protocol";
import { runBudgetMsOrDefault } from "../../shared/config";
import { type RuntimeContext, withClient } from "../../shared/context";
import { groupByAccount } from "../account-groups";
import { accountFingerprint, accountRefIn, ledgerAccountOf } from "../account-identity";
import { TokenIndex } from "../names/token-index";
import { listNewestSince, walkAllTokens } from "../names/token-list";
import { markOf } from "../writer/latest-tokens";
import { accountSwitch, notThePlansAccount, pinError, removedTokenWarnings, uncheckedNotNeeded, unknownLastApply } from "./account-checks";
import { type LastApply, readLastApply } from "./last-apply";
import { answerLookups, type StackLookup } from "./stack-lookups";
import { isAccountError, isLookup, type LastManaged, type ManagedToken, parseStackQuery, ReadError, type StackQuery } from "./stack-query";
import { descriptionDigest, heldByAnother, observeToken, resolvedTokens } from "./token-observation";

/**
 * The stack's one read of its tokens and lookups (`stack-read`): at every plan (see planTimeRead),
 * and again after the writes of a group of tokens (see afterWriteRead). Either logs in once per
 * account and base URL, lists the tokens there once when the stack manages tokens there, reads the
 * flavor catalog once when it has lookups there, and returns the managed tokens' observations and
 * attributes and each lookup's answer. Other tokens of the account never leave this process.
 */
export async function stackRead(ctx: RuntimeContext, query: Record<string, string>): Promise<Record<string, string>> {
  return query[STACK_READ_AFTER_WRITE] === "true" ? afterWriteRead(ctx, query) : planTimeRead(ctx, query);
}

/**
 * At every plan: reads what the last apply managed from the state (beside the walks; see
 * readLastApply), then walks each account, and returns the run's ticket (the accounts read, and
 * where each walk ended). Fails the plan when the credentials reach another account than the one the
 * last apply managed the tokens on, or one its pin does not allow (./account-checks.ts).
 */
async function planTimeRead(ctx: RuntimeContext, query: Record<string, string>): Promise<Record<string, string>> {
  const stack = parseStackQuery(query);
  const workspace = query[STACK_READ_WORKSPACE];
  const report = new ReadReport(ctx);
  const hasTokens = workspace !== undefined && stack.tokens.length > 0;
  // Without tokens too: the last ApiToken removed from a stack whose lookups stay is said in its plan.
  const readsLastApply = workspace !== undefined;
  const accounts = new Set<string>();
  const marks: Record<string, { createdAt: number; ids: readonly string[] }> = {};
  let lastApply = { known: true, ledger: undefined } as LastApply;
  // Half the budget at most, and a minute: what is left is the walk's, and the warning says what happened.
  const stateReadMs = Math.min(60_000, runBudgetMsOrDefault(ctx.env) / 2);
  const stopStateRead = new AbortController();
  const lastApplyRead = readsLastApply
    ? readLastApply(ctx.env, ctx.cwd, workspace, stateReadMs, stopStateRead.signal, secretsOf(stack)).then((read) => (lastApply = read))
    : Promise.resolve(lastApply);
  let byName: ReadonlyMap<string, LedgerToken> | undefined;
  const ledgerEntry = (m: ManagedToken) => {
    if (!lastApply.known || lastApply.ledger === undefined) return undefined;
    byName ??= unconfiguredByName(lastApply.ledger, stack.tokens);
    return ledgerEntryOf(m, lastApply.ledger, byName);
  };
  const listedOn = new Map<string, TokenIndex>();
  const ledger = new Map<string, LedgerToken>();
  try {
    await readAccounts(ctx, stack, report, {
      list: async (client) => {
        const [listed] = await Promise.all([walkAllTokens(client, ctx), lastApplyRead]);
        return new TokenIndex(listed);
      },
      observe: (tokens, listed, account) => {
        const current = currentAccount(account);
        listedOn.set(ledgerAccountKey(current), listed);
        const fingerprint = accountFingerprint(current);
        accounts.add(fingerprint);
        const mark = markOf(listed.all());
        if (mark !== undefined) marks[fingerprint] = mark;
        // Before anything is planned on it: credentials of another account fail the plan.
        const pinned = pinError(tokens, current);
        if (pinned !== undefined) throw new ReadError(new Error(pinned), tokens);
        const opts = { env: ctx.env, workspace: workspace ?? "default" };
        // Where the state cannot be read, only a pin checks the account; else this plan goes on only on purpose.
        if (!lastApply.known && tokens.every((m) => m.allowedIdentities === undefined)) {
          const unchecked = unknownLastApply(lastApply, current, opts);
          if ("refusal" in unchecked) throw new ReadError(new Error(unchecked.refusal), tokens);
          report.warnInPlan(unchecked.warning);
        } else if (lastApply.known) {
          const notNeeded = uncheckedNotNeeded(current, ctx.env);
          if (notNeeded !== undefined) report.warnInPlan(notNeeded);
        }
        const lastOf = tokens.map((m) => ({ m, last: lastManaged(ledgerEntry(m)) }));
        const { refusal, moving } = accountSwitch(lastOf, listed, current, opts);
        if (refusal !== undefined) throw new ReadError(new Error(refusal), tokens);
        if (moving !== undefined) report.warnInPlan(moving);
        const recorded = recordedAccount(lastOf, listed, current);
        // Moving on purpose: what the last apply managed is on the other account, nothing to compare here.
        const observed = lastOf.map(({ m, last: recordedLast }) => {
          const last = moving === undefined ? recordedLast : undefined;
          return { m, last, seen: observeToken(m, listed, last, report.warnInPlan, ctx.out.warn) };
        });
        // A token two ApiTokens designate is the one's whose token the last apply managed (it renames it away).
        const keeper = new Map(
          observed.flatMap((o) => (o.seen.id !== "" && o.last?.id === o.seen.id ? [[o.seen.id, o.m.path] as const] : [])),
        );
        for (const { m, seen } of observed) {
          const owner = keeper.get(seen.id);
          const { fields, id } = owner === undefined || owner === m.path ? seen : heldByAnother(m, seen.id, owner);
          Object.assign(report.result, fields);
          // A token not found now (revoked, to be created) keeps its last entry until an apply gives it
          // another, but only on this account: one moving away leaves its old account's entry behind.
          const kept = ledgerEntry(m);
          // A token known by its ledger entry keeps the entry's name and digest here; the ledger output puts the configured ones over them.
          if (id !== "" && m.byLedger && kept !== undefined) ledger.set(m.path, { ...kept, id, account: recorded });
          else if (id !== "") ledger.set(m.path, { name: m.name, id, account: recorded, description: descriptionDigest(m.description) });
          else if (kept !== undefined && sameLedgerAccount(kept.account, recorded)) ledger.set(m.path, kept);
        }
      },
    });
    // A stack without tokens reads the state for its removal warnings alone.
    await lastApplyRead;
  } finally {
    // A read that failed leaves no terraform behind.
    stopStateRead.abort();
  }
  if (readsLastApply) {
    if (hasTokens) report.result[STACK_READ_TICKET] = encodeRunTicket({ accounts: [...accounts].sort(), marks });
    if (lastApply.known && lastApply.unfinished !== undefined) report.warnInPlan(lastApply.unfinished);
    if (lastApply.known && lastApply.ledger !== undefined) {
      for (const line of removedTokenWarnings(lastApply.ledger, stack.tokens, (a) => listedOn.get(ledgerAccountKey(a))))
        report.warnInPlan(line);
    }
    report.result[STACK_READ_LEDGER] = encodeLedger(ledger);
  }
  return report.finish(stack);
}

/** The names of the stack's accounts' secret variables: terraform's backend needs none of them. */
function secretsOf(stack: StackQuery): string[] {
  const prefixes = new Set([...stack.tokens, ...stack.lookups].map((e) => e.envPrefix ?? DEFAULT_ENV_PREFIX));
  return [...prefixes].flatMap((prefix) => {
    const names = accountEnv(prefix);
    return [names.PASSWORD, names.PASSWORD_MD5, names.API_TOKEN];
  });
}

/** An account as the ledger records it, from the read's environment. */
function currentAccount(account: ReadAccount): LedgerAccount {
  return ledgerAccountOf(accountRefIn(account.env, account.envPrefix, account.baseUrl));
}

/** A ledger entry's key among those of paths no longer configured: its prefix and folded name. */
function nameKey(prefix: string, name: string): string {
  return `${prefix} ${foldTokenName(name)}`;
}

/** The ledger's entries of construct paths no longer configured, by nameKey (the first of each). */
function unconfiguredByName(ledger: ReadonlyMap<string, LedgerToken>, tokens: readonly ManagedToken[]): Map<string, LedgerToken> {
  const configured = new Set(tokens.map((m) => m.path));
  const byName = new Map<string, LedgerToken>();
  for (const [path, entry] of ledger) {
    const key = nameKey(entry.account.prefix, entry.name);
    if (!configured.has(path) && !byName.has(key)) byName.set(key, entry);
  }
  return byName;
}

/**
 * The ledger's entry for `m`: under its construct path, else (a construct moved in the code) the
 * entry of a path no longer configured whose token has `m`'s name or a previous name, on its account
 * (not for a token whose name is an expression: the read does not know it).
 */
function ledgerEntryOf(
  m: ManagedToken,
  ledger: ReadonlyMap<string, LedgerToken>,
  unconfigured: ReadonlyMap<string, LedgerToken>,
): LedgerToken | undefined {
  const byPath = ledger.get(m.path);
  if (byPath !== undefined || m.byLedger) return byPath;
  const prefix = m.envPrefix ?? DEFAULT_ENV_PREFIX;
  for (const name of [m.name, ...m.previousNames]) {
    const entry = unconfigured.get(nameKey(prefix, name));
    if (entry !== undefined) return entry;
  }
  return undefined;
}

/** What the last apply managed for a token: its entry in the state's ledger (see ledgerEntryOf). */
function lastManaged(entry: LedgerToken | undefined): LastManaged | undefined {
  return entry === undefined ? undefined : { id: entry.id, name: entry.name, account: entry.account, description: entry.description };
}

/**
 * The account as this plan's ledger records it: as the last apply recorded it where these credentials
 * list a token it managed at the same prefix and address (another credential of the same account, or a
 * rotated API token, changes nothing in the state), else as the credentials log in now.
 */
function recordedAccount(
  lastOf: ReadonlyArray<{ readonly last: LastManaged | undefined }>,
  listed: TokenIndex,
  current: LedgerAccount,
): LedgerAccount {
  const same = lastOf.find(
    ({ last }) =>
      last?.account !== undefined &&
      last.account.prefix === current.prefix &&
      last.account.api === current.api &&
      listed.byId(last.id) !== undefined,
  );
  return same?.last?.account ?? current;
}

/**
 * After the writes of an account (its writer created or adopted a token the plan had no id for):
 * what was created since the plan's walk of the account, newest first (one request per 50 tokens),
 * for the tokens of STACK_READ_NEW_SLOTS; a walk of the whole list where the server does not prove
 * that it sorts, or where such a token is not among the newest (an older token adopted by name).
 * The other tokens' attributes are the plan-time read's.
 */
async function afterWriteRead(ctx: RuntimeContext, query: Record<string, string>): Promise<Record<string, string>> {
  const ticket = decodeRunTicket(query[STACK_READ_TICKET]);
  const stack = parseStackQuery(query);
  const newSlots = new Set((query[STACK_READ_NEW_SLOTS] ?? "").split(",").filter((slot) => slot !== ""));
  const report = new ReadReport(ctx);
  const ledger = new Map<string, LedgerToken>();
  await readAccounts(ctx, { ...stack, tokens: stack.tokens.filter((m) => newSlots.has(m.slot)) }, report, {
    list: async (client, tokens, account) => {
      const mark = ticket?.marks?.[accountFingerprint(currentAccount(account))];
      const read = mark === undefined ? undefined : await listNewestSince(client, ctx, mark);
      const since = read === undefined ? undefined : new TokenIndex(read);
      const complete = since !== undefined && resolvedTokens(tokens, since).length === tokens.length;
      return complete ? since : new TokenIndex(await walkAllTokens(client, ctx));
    },
    observe: (tokens, listed, account) => {
      const current = currentAccount(account);
      const refused = notThePlansAccount(ticket, current, false);
      if (refused !== undefined) throw new ReadError(new Error(refused), tokens);
      for (const m of tokens) {
        const { fields, id, named } = observeToken(m, listed, undefined, report.warnInPlan, ctx.out.warn);
        if (!named) {
          // Not an error: `terraform plan -refresh-only` reads this after the token was deleted in the
          // console, and must show the drift rather than fail. The next plan recreates it.
          ctx.out.warn(
            `no API token is named "${m.name}" after the writes: it was removed or renamed outside Terraform; the next plan recreates it`,
          );
        }
        Object.assign(report.result, fields);
        if (id !== "") ledger.set(m.path, { name: m.name, id, account: current, description: descriptionDigest(m.description) });
      }
    },
  });
  report.result[STACK_READ_LEDGER] = encodeLedger(ledger);
  return report.finish(stack);
}

/** What the read says beyond the tokens' fields: warnings for the plan, the lookups' errors. */
class ReadReport {
  readonly result: Record<string, string> = {};
  readonly lookupErrors: string[] = [];
  private readonly warnings: string[] = [];

  constructor(private readonly ctx: RuntimeContext) {}

  /**
   * What the user must see even when the read succeeds: in the log, and in the plan's check block
   * (Terraform shows an external program's stderr only when it fails).
   */
  readonly warnInPlan = (line: string): void => {
    this.ctx.out.warn(line);
    this.warnings.push(line);
  };

  /**
   * The result. Failed lookups are the read's error when it serves no token; with tokens, they are in
   * the result (a plan of tokens, `-target`, goes on), and the stack's token roster fails a full plan.
   */
  finish(stack: StackQuery): Record<string, string> {
    if (this.lookupErrors.length > 0) {
      if (stack.tokens.length === 0) throw new Error(this.lookupErrors.join("\n"));
      this.result[STACK_READ_LOOKUP_ERRORS] = this.lookupErrors.join("\n");
    }
    this.result[STACK_READ_WARNINGS] = this.warnings.join("\n");
    return this.result;
  }
}

/** An account as the stack's query names it: its variable prefix and base URL, with the environment it is read from. */
interface ReadAccount {
  readonly env: NodeJS.ProcessEnv;
  readonly envPrefix?: string;
  readonly baseUrl?: string;
}

/** How a read lists one account's tokens and observes its managed tokens among them. */
interface TokenReading {
  list(client: ApiClient, tokens: readonly ManagedToken[], account: ReadAccount): Promise<TokenIndex>;
  observe(tokens: readonly ManagedToken[], listed: TokenIndex, account: ReadAccount): void;
}

/**
 * Reads every account of the stack: the token list (by `reading`) beside the flavor catalog, so a
 * plan waits for the longer of the two. Both are waited for, so that a failed list is never hidden
 * behind the catalog's failure; each failure names the constructs it concerns. Lookups that fail are
 * collected in `report`, each by its construct's path, after every account was read.
 */
async function readAccounts(ctx: RuntimeContext, stack: StackQuery, report: ReadReport, reading: TokenReading): Promise<void> {
  for (const group of groupByAccount<ManagedToken | StackLookup>([...stack.tokens, ...stack.lookups])) {
    const { baseUrl, envPrefix } = group[0];
    const account: ReadAccount = { env: ctx.env, envPrefix, baseUrl };
    const groupTokens = group.filter((e): e is ManagedToken => !isLookup(e));
    const groupLookups = group.filter(isLookup);
    // An account's error concerns every construct reading there; the list's own, the tokens; the catalog's, the lookups.
    const named = (err: unknown, part: ReadonlyArray<ManagedToken | StackLookup>) =>
      err instanceof ReadError ? err : new ReadError(err, isAccountError(err) ? group : part);
    try {
      await withClient(
        ctx,
        baseUrl,
        async (client) => {
          const [listed, catalog] = await Promise.allSettled([
            groupTokens.length > 0 ? reading.list(client, groupTokens, account) : Promise.resolve(undefined),
            answerLookups(client, groupLookups, ctx.out, report.result),
          ]);
          if (listed.status === "rejected") {
            throw named(listed.reason, catalog.status === "rejected" && isAccountError(catalog.reason) ? group : groupTokens);
          }
          if (catalog.status === "rejected") throw named(catalog.reason, groupLookups);
          if (listed.value !== undefined) reading.observe(groupTokens, listed.value, account);
          report.lookupErrors.push(...catalog.value);
        },
        envPrefix,
      );
    } catch (err) {
      const error = named(err, group);
      // The lookups' alone (an account only they use, their catalog read): with tokens in this read, theirs to report.
      if (stack.tokens.length > 0 && error.readers.every(isLookup)) report.lookupErrors.push(error.message);
      else throw error;
    }
  }
}
