import { wasAdoptedAfterLostResponse } from "../../client/ambiguous-create";
import type { ApiClient } from "../../client/client";
import { decodePlanned, foldTokenName, type Planned, PLANNED_ENV, TokenEnv } from "../../protocol";
import { type RuntimeContext, withClient } from "../../shared/context";
import { errorMessage } from "../../shared/error-message";
import { type AccountRef, accountRefIn, apiAddress, ledgerAccountOf } from "../account-identity";
import { leaseMs, lockWaitMs } from "../locks/lock-bounds";
import { withNameLock } from "../locks/name-lock";
import { parsePreviousNames, requireName } from "../names/name-input";
import { tokensNamed } from "../names/name-match";
import { listNewestSince, type TokenView, walkAllTokens } from "../names/token-list";
import { notThePlansAccount } from "../reads/account-checks";
import { type AppliedRecord, readAppliedRecord, writeAppliedRecord } from "../records/applied-record";
import { type Handoff, removeHandoff } from "../records/handoff";
import { type Decided, type LatestTokens, withLatestTokens } from "../run/run-walk";
import { takeHandoff } from "./handoff-takeover";
import { accountDigestOf, accountLabel, apiUrlOf, constructLabel, type TokenScope, tokenScope, withTriggerEnv } from "./token-scope";
import { findTarget, oldTokenLeftBehind, type Target, type Wanted } from "./token-target";

/**
 * Creation-time provisioner: make the API hold exactly one token with the configured name and
 * description, writing only what differs (see findTarget for which token). The read that decides
 * is the last thing before the write (see withLatestTokens), under the lock of the name.
 */
export async function applyToken(input: RuntimeContext): Promise<void> {
  const apply = applyRequest(input);
  // Before anything is written or claimed: the plan's checks of the account were for these credentials.
  const refused = notThePlansAccount(apply.planned.ticket, ledgerAccountOf(apply.account), true);
  if (refused !== undefined) throw new Error(refused);
  const handoff = takeHandoff(apply.ctx, apply.scope, apply.name, apply.planned);
  const lastApplied = appliedOnThisAccount(apply.ctx, apply.scope, apply.api, apply.name);
  const managedId = await underNameLock(apply, async (client) => {
    const written = await withLatestTokens(apply.ctx, client, apply.account, (latest) =>
      writeOnce(apply, client, latest, handoff, lastApplied),
    );
    await afterTheWrite(apply, client, written, handoff, lastApplied);
    return written.token.id;
  });
  recordApplied(apply, managedId, handoff);
}

/** What this create half is asked for, from its environment with the resource's triggers spread in. */
interface ApplyRequest extends Wanted {
  readonly ctx: RuntimeContext;
  readonly scope: TokenScope;
  /** Undefined when the construct does not manage the description: the token's own is kept. */
  readonly description: string | undefined;
  /** The same account as the run's files are keyed: with the credential's identity. */
  readonly account: AccountRef;
  /** What the plan showed: the run's ticket and the token's id. */
  readonly planned: Planned;
}

function applyRequest(input: RuntimeContext): ApplyRequest {
  const withTriggers = withTriggerEnv(input);
  const name = requireName(withTriggers.env[TokenEnv.NAME], TokenEnv.NAME);
  const description = withTriggers.env[TokenEnv.DESCRIPTION];
  const previousNames = parsePreviousNames(withTriggers.env[TokenEnv.PREVIOUS_NAMES], TokenEnv.PREVIOUS_NAMES);
  const scope = tokenScope(withTriggers.env);
  const planned = decodePlanned(withTriggers.env[PLANNED_ENV]);
  const ctx: RuntimeContext = { ...withTriggers, ticket: planned.ticket };
  const account = accountRefIn(ctx.env, scope.envPrefix, scope.baseUrl);
  const api = accountDigestOf(scope, ctx.env);
  return { ctx, scope, name, description, previousNames, api, account, planned, plannedId: planned.id, warn: ctx.out.warn };
}

/** Runs `fn` with a client of the token's account, holding the lock of its name (see withNameLock). */
function underNameLock<T>(apply: ApplyRequest, fn: (client: ApiClient) => Promise<T>): Promise<T> {
  const { ctx, scope, name } = apply;
  return withClient(
    ctx,
    scope.baseUrl,
    (client) =>
      withNameLock(
        {
          cwd: ctx.cwd,
          apiUrl: apiUrlOf(scope, ctx.env),
          envPrefix: scope.envPrefix,
          name,
          waitMs: lockWaitMs(ctx.env),
          leaseMs: leaseMs(ctx.env),
          onWait: ctx.out.info,
        },
        () => fn(client),
      ),
    scope.envPrefix,
  );
}

/** The one write a create half made (or none), with what it needs to report it. */
interface Written {
  /** The token the construct now manages, as the write returned it. */
  readonly token: TokenView;
  /** Undefined for a token created now. */
  readonly target?: Target;
  readonly changes: readonly string[];
  /** The token this folder applied before under another name, when it still has it (see oldTokenLeftBehind). */
  readonly leftBehind?: TokenView;
  /** The newest created_at the list before the write covered. */
  readonly listedSince: number;
  /** A create the client found after a lost response: it has said "adopted" already. */
  readonly adoptedAfterLostResponse?: boolean;
}

/**
 * Chooses the token among `latest` and makes at most one write: a create, or an update of what
 * differs. Nothing but the choice stands between the read and the write; the pending record that
 * a retry adopts follows the write at once.
 */
async function writeOnce(
  apply: ApplyRequest,
  client: ApiClient,
  latest: LatestTokens,
  handoff: Handoff | undefined,
  lastApplied: AppliedRecord | undefined,
): Promise<Decided<Written>> {
  const target = findTarget(apply, latest.tokens, handoff, lastApplied);
  refuseOtherThanPlanned(apply.planned, apply.scope, apply.name, target?.token);
  const leftBehind = oldTokenLeftBehind(apply, latest.tokens, lastApplied);
  const listedSince = latest.since;
  if (!target) {
    const created = await client.createToken({ name: apply.name, description: apply.description });
    apply.ctx.out.addSecrets([created.token]);
    recordPending(apply, created.id);
    const adoptedAfterLostResponse = wasAdoptedAfterLostResponse(created);
    return { result: { token: created, changes: [], leftBehind, listedSince, adoptedAfterLostResponse }, wrote: created };
  }
  const changes = changesTo(apply, target.token);
  if (changes.length === 0) return { result: { token: target.token, target, changes, leftBehind, listedSince } };
  // An unmanaged description is sent back as it is, whatever the server does with an omitted one.
  const description = apply.description ?? target.token.description ?? undefined;
  const updated = await client.updateToken(target.token.id, { name: apply.name, description });
  recordPending(apply, updated.id);
  return { result: { token: updated, target, changes, leftBehind, listedSince }, wrote: updated };
}

/** What follows a write, once the run's walk holds it: the lines that report it, and the checks. */
async function afterTheWrite(
  apply: ApplyRequest,
  client: ApiClient,
  written: Written,
  handoff: Handoff | undefined,
  lastApplied: AppliedRecord | undefined,
): Promise<void> {
  const { ctx, name } = apply;
  const { token, target } = written;
  if (target === undefined) {
    if (handoff) {
      // Not "no longer exists": after a move the released token is ACTIVE on the other account.
      const which = handoff.id ? `"${handoff.name}" (id ${handoff.id})` : `"${handoff.name}"`;
      ctx.out.info(
        `the API token ${which} released by the replaced resource is not listed by these credentials (revoked, or on ` +
          `another account, where it stays ACTIVE); a new one was created`,
      );
    }
    if (!written.adoptedAfterLostResponse) ctx.out.info(`created API token "${token.name}" (id ${token.id})`);
  }
  warnOldTokenActive(ctx, apply.scope, written.leftBehind, name, token.id);
  if (target === undefined || written.changes.length > 0) checkStoredName(ctx, token, name);
  if (target === undefined) await lookAgainAfterCreate(ctx, client, token, name, written.listedSince);
  else ctx.out.info(outcomeLine(name, target, written.changes, lastApplied));
}

/** What an update of `token` changes, as the outcome line lists it; empty when it is up to date. */
function changesTo(apply: ApplyRequest, token: TokenView): string[] {
  const changes: string[] = [];
  if (token.name !== apply.name) changes.push(`renamed "${token.name}" to "${apply.name}"`);
  if (apply.description !== undefined && (token.description ?? "") !== apply.description) changes.push("updated the description");
  return changes;
}

/** One line per outcome: how the token was found, and what was written. */
function outcomeLine(name: string, target: Target, changes: readonly string[], lastApplied: AppliedRecord | undefined): string {
  const { token, foundBy } = target;
  const what = changes.length === 0 ? "no change" : changes.join(", ");
  if (foundBy === "previous name") {
    return `no API token is named "${name}"; renaming "${token.name}" (id ${token.id}), a previous name: ${what}`;
  }
  if (foundBy === "plan") {
    return `no API token is named "${name}"; renaming "${token.name}" (id ${token.id}), the token the last apply managed for this ApiToken: ${what}`;
  }
  if (foundBy === "pending record") {
    return (
      `adopted API token "${token.name}" (id ${token.id}), which an unfinished apply from this folder wrote for "${name}", ` +
      `instead of creating another: ${what}`
    );
  }
  if (foundBy === "handoff" || lastApplied?.id === token.id) {
    // The token this resource already managed (handed over in this run, or applied before from here).
    return changes.length === 0 ? `API token "${name}" (id ${token.id}) is up to date; no change` : `API token id ${token.id}: ${what}`;
  }
  return `adopted existing API token "${token.name}" (id ${token.id}) instead of creating another: ${what}`;
}

/** This create half's applied record of token `id`: pending until the API is in the wanted state. */
function writeRecordOf(apply: ApplyRequest, id: string, pending: boolean): void {
  const { ctx, scope, name, api } = apply;
  writeAppliedRecord(ctx.cwd, {
    key: scope.key,
    workspace: scope.workspace,
    id,
    name,
    api,
    apiUrl: apiAddress(apply.account.apiUrl),
    path: scope.path || undefined,
    identity: apply.account.identity,
    ...(pending ? { pending: true } : {}),
    at: new Date().toISOString(),
  });
}

/** Written right after a write, before anything can fail: a retry adopts this token (see AppliedRecord.pending). */
function recordPending(apply: ApplyRequest, id: string): void {
  writeRecordOf(apply, id, true);
}

/** The API is in the wanted state: this folder records the token, and a hand-off taken is spent. */
function recordApplied(apply: ApplyRequest, managedId: string, handoff: Handoff | undefined): void {
  const { ctx, scope } = apply;
  writeRecordOf(apply, managedId, false);
  // Only once the API is in the wanted state: a failed run keeps the claimed hand-off for the retry.
  // (Without a hand-off taken, one there is not this run's to remove: see takeHandoff.)
  if (handoff) removeHandoff(ctx.cwd, scope.workspace, scope.key);
}

/**
 * The plan showed consumers of tokenId and token the id its read found ("" when it found none); an
 * apply that would end on another token, or create one, would hand them a stale id. Checked before
 * any write, so nothing is changed.
 */
function refuseOtherThanPlanned(plan: Planned, scope: TokenScope, name: string, target: TokenView | undefined): void {
  const planned = plan.id;
  if (!planned || target?.id === planned) return;
  const now = target ? `it would now apply API token ${target.id} ("${target.name}")` : `no such token exists any more`;
  throw new Error(
    `the plan showed API token id ${planned} for "${name}" (${constructLabel(scope)}), the id its consumers were planned with, ` +
      `but ${now}: it was revoked, renamed or replaced since the plan. Nothing was changed; run terraform plan again.`,
  );
}

/**
 * After a create, one more look: another token of the same name may exist now (a stack of the
 * same name in another folder, a create that committed after its settle window). Only what was
 * created since the list before the create (`listedNewest`, its newest created_at) can be new:
 * newest first, usually one request; a walk where the server does not sort. Warned, never
 * fatal: the create itself succeeded.
 */
async function lookAgainAfterCreate(
  ctx: RuntimeContext,
  client: ApiClient,
  created: TokenView,
  name: string,
  listedNewest: number,
): Promise<void> {
  let again: TokenView[];
  try {
    // The token just created proves the order: it is at or after the mark, so a newest-first list shows it before anything older.
    const since = await listNewestSince(client, ctx, { createdAt: Math.min(listedNewest, created.created_at), ids: [created.id] });
    again = tokensNamed(since ?? (await walkAllTokens(client, ctx)), name, created.id).matches;
  } catch (err) {
    ctx.out.warn(`could not look again for other API tokens named "${name}" after the create: ${ctx.out.redact(errorMessage(err))}`);
    return;
  }
  const others = again.filter((t) => t.id !== created.id);
  if (others.length === 0) return;
  ctx.out.warn(
    `another API token named "${name}" exists besides the one just created (${others.map((t) => `id ${t.id}`).join(", ")}): ` +
      `another stack with this name (in another folder or machine) or a create that committed late. ` +
      `This stack uses ${created.id}; revoke the other in the console if nothing uses it.`,
  );
}

/**
 * This folder's record of the token the construct applied last, when it is on this account. A
 * record of another account (the construct was moved to this one, under create_before_destroy,
 * where no hand-off tells) is reported, never followed: that token stays active where it is.
 */
function appliedOnThisAccount(ctx: RuntimeContext, scope: TokenScope, account: string, name: string): AppliedRecord | undefined {
  const record = readAppliedRecord(ctx.cwd, scope.workspace, scope.key, ctx.out.warn);
  if (!record || record.api === account) return record;
  ctx.out.warn(
    `API token "${record.name}" (id ${record.id}), which ${constructLabel(scope)} managed on another account or API address, ` +
      `stays ACTIVE there: a token named "${name}" is created or adopted on this account${accountLabel(scope)} instead. ` +
      `Revoke token ${record.id} on the other account if it is not needed.`,
  );
  return undefined;
}

/**
 * A rename that became a new (or adopted) token: the token this construct managed before, by
 * this folder's record, still has its old name (`old`, see oldTokenLeftBehind). This happens under
 * create_before_destroy, where Terraform runs no destroy-time provisioner and so no hand-off exists.
 */
function warnOldTokenActive(ctx: RuntimeContext, scope: TokenScope, old: TokenView | undefined, name: string, managedId: string): void {
  if (!old || old.id === managedId) return;
  ctx.out.warn(
    `API token "${old.name}" (id ${old.id}), which ${constructLabel(scope)} managed before, stays ACTIVE: ` +
      `this apply did not rename it to "${name}" but created or adopted API token ${managedId} ` +
      `(under create_before_destroy Terraform runs no destroy-time provisioner, so there is no hand-off). ` +
      `Add previousNames: ["${old.name}"] to ${constructLabel(scope)} to make this a rename next time, ` +
      `and revoke token ${old.id} in the cloud console if it is not needed.`,
  );
}

/**
 * The name the API stored. Another spelling that folds to the same (trimmed, lower-cased) is
 * accepted, since every look-up also matches that way, and said once; anything else fails, after
 * the pending record already holds the token's id, so the next apply adopts it rather than
 * creating another.
 */
function checkStoredName(ctx: RuntimeContext, stored: { readonly id: string; readonly name: string }, wanted: string): void {
  if (stored.name === wanted) return;
  if (foldTokenName(stored.name) === foldTokenName(wanted)) {
    ctx.out.info(
      `the API stored API token ${stored.id}'s name as ${JSON.stringify(stored.name)} (it trims or lower-cases names); ` +
        `names are matched that way too, so it is found as ${JSON.stringify(wanted)}`,
    );
    return;
  }
  throw new Error(
    `the API stored API token ${stored.id} as ${JSON.stringify(stored.name)}, not the name requested, ${JSON.stringify(wanted)}. ` +
      `This folder recorded its id, so the next apply adopts it instead of creating another; ` +
      `set the ApiToken's name to ${JSON.stringify(stored.name)} to end this`,
  );
}
