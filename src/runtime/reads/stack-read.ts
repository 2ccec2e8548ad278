import type { ApiClient } from "../../client/client";
import {
  decodeRunTicket,
  encodeRunTicket,
  STACK_READ_AFTER_WRITE,
  STACK_READ_LISTED_SLOTS,
  STACK_READ_LOOKUP_ERRORS,
  STACK_READ_TICKET,
  STACK_READ_WARNINGS,
  STACK_READ_WORKSPACE,
  stackReadKey,
  StackReadResultField,
} from "../../protocol";
import { type RuntimeContext, withClient } from "../../shared/context";
import { groupByAccount } from "../account-groups";
import { accountRefIn } from "../account-identity";
import { tokensNamed } from "../names/name-match";
import { type TokenView, walkAllTokens } from "../names/token-list";
import { type AppliedRecord, readAppliedRecords } from "../records/applied-record";
import { accountSwitchError, type ReadAccount, sharedWithWorkspacesWarning } from "../records/applied-record-checks";
import { startRun } from "../run/run-start";
import { tokensSinceRunWalk } from "../run/run-walk";
import { answerLookups, type StackLookup } from "./stack-lookups";
import { isAccountError, isLookup, type ManagedToken, parseStackQuery, ReadError, type StackQuery } from "./stack-query";
import { observeToken, resolvedTokens } from "./token-observation";

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
 * At every plan, before any script of its run: starts the run (its ticket, returned in the result;
 * see startRun), then walks each account. Fails the plan when the credentials reach another
 * account than the one the last apply managed a token on (see accountSwitchError).
 */
async function planTimeRead(ctx: RuntimeContext, query: Record<string, string>): Promise<Record<string, string>> {
  const stack = parseStackQuery(query);
  const workspace = query[STACK_READ_WORKSPACE];
  const report = new ReadReport(ctx);
  if (workspace !== undefined && stack.tokens.length > 0) {
    report.result[STACK_READ_TICKET] = encodeRunTicket(startRun(ctx.env, query, report.warnInPlan));
  }
  const records = appliedRecords(ctx.cwd, workspace, stack);
  await readAccounts(ctx, stack, report, {
    list: (client) => walkAllTokens(client, ctx),
    observe: (m, listed, account) => {
      const last = records.applied.get(m.key);
      // Before anything is planned on it: credentials that now reach another account fail the plan.
      const switched = accountSwitchError(ctx.cwd, last, listed, account);
      if (switched !== undefined) throw new ReadError(new Error(switched), [m]);
      Object.assign(report.result, observeToken(m, listed, last, report.warnInPlan, ctx.out.warn));
      const id = report.result[stackReadKey(m.slot, StackReadResultField.ID)];
      const shared = sharedWithWorkspacesWarning(m.name, { id }, records.otherWorkspaces, account);
      if (shared !== undefined) report.warnInPlan(shared);
    },
  });
  return report.finish(stack);
}

/**
 * After the writes of a group of tokens (the create halves of a create, a rename through a
 * hand-off): the walk the run's create halves took plus what appeared since (one or two requests
 * instead of a walk of the account), back to the oldest token of the slots whose value or last use
 * the stack refers to (STACK_READ_LISTED_SLOTS); a walk when the run took none, or when such a
 * token was not listed by the API itself (the walk keeps neither a value nor a last use).
 */
async function afterWriteRead(input: RuntimeContext, query: Record<string, string>): Promise<Record<string, string>> {
  const ticket = decodeRunTicket(query[STACK_READ_TICKET]);
  const ctx: RuntimeContext = ticket !== undefined ? { ...input, ticket } : input;
  const stack = parseStackQuery(query);
  const records = appliedRecords(ctx.cwd, query[STACK_READ_WORKSPACE], stack);
  const last = (m: ManagedToken) => records.applied.get(m.key);
  const listedSlots = new Set((query[STACK_READ_LISTED_SLOTS] ?? "").split(",").filter((slot) => slot !== ""));
  const report = new ReadReport(ctx);
  await readAccounts(ctx, stack, report, {
    list: async (client, tokens, account) => {
      const wanted = tokens.filter((m) => listedSlots.has(m.slot));
      const ref = accountRefIn(ctx.env, account.envPrefix, account.baseUrl);
      const seen = await tokensSinceRunWalk(ctx, client, ref, (walked) => resolvedTokens(wanted, walked, last));
      const complete = seen !== undefined && resolvedTokens(wanted, seen, last).every((t) => t.token !== "");
      return complete ? seen : walkAllTokens(client, ctx);
    },
    observe: (m, listed) => {
      if (!tokensNamed(listed, m.name).matches.length) {
        // Not an error: `terraform plan -refresh-only` reads this after the token was deleted in the
        // console, and must show the drift rather than fail. The next plan recreates it.
        ctx.out.warn(
          `no API token is named "${m.name}" after the writes: it was removed or renamed outside Terraform; the next plan recreates it`,
        );
      }
      Object.assign(report.result, observeToken(m, listed, last(m), report.warnInPlan, ctx.out.warn));
    },
  });
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

/** This folder's applied records of the workspace (pending ones too: the create half follows them), and finished ones of the others. */
function appliedRecords(
  cwd: string,
  workspace: string | undefined,
  stack: StackQuery,
): { readonly applied: ReadonlyMap<string, AppliedRecord>; readonly otherWorkspaces: readonly AppliedRecord[] } {
  const applied = new Map<string, AppliedRecord>();
  const otherWorkspaces: AppliedRecord[] = [];
  if (workspace === undefined || stack.tokens.length === 0) return { applied, otherWorkspaces };
  for (const r of readAppliedRecords(cwd)) {
    if (r.workspace === workspace) applied.set(r.key, r);
    else if (!r.pending) otherWorkspaces.push(r);
  }
  return { applied, otherWorkspaces };
}

/** How a read lists one account's tokens and observes each managed token among them. */
interface TokenReading {
  list(client: ApiClient, tokens: readonly ManagedToken[], account: ReadAccount): Promise<TokenView[]>;
  observe(m: ManagedToken, listed: readonly TokenView[], account: ReadAccount): void;
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
          if (listed.value !== undefined) for (const m of groupTokens) reading.observe(m, listed.value, account);
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
