import { wasAdoptedAfterLostResponse } from "../../client/ambiguous-create";
import type { ApiClient } from "../../client/client";
import { foldTokenName, TokenEnv } from "../../protocol";
import { type RuntimeContext, withClient } from "../../shared/context";
import { errorMessage } from "../../shared/error-message";
import { type AccountRef, accountRefIn } from "../account-identity";
import { lockStaleAfterMs, lockWaitMs } from "../locks/lock-bounds";
import { withNameLock } from "../locks/name-lock";
import { parsePreviousNames, requireName } from "../names/name-input";
import { tokensNamed } from "../names/name-match";
import { duplicatesWarning, pickByName, pickByPreviousNames } from "../names/name-pick";
import { allTokens, type TokenView } from "../names/token-list";
import { type AppliedRecord, readAppliedRecord, writeAppliedRecord } from "../records/applied-record";
import { type Handoff, removeHandoff } from "../records/handoff";
import { newestSince, recordRunWrite, runTokens } from "../run/run-walk";
import { takeHandoff } from "./handoff-takeover";
import {
  accountDigestOf,
  accountLabel,
  apiUrlOf,
  constructLabel,
  type Planned,
  plannedOf,
  runOf,
  type TokenScope,
  tokenScope,
  withTriggerEnv,
} from "./token-scope";

/**
 * Creation-time provisioner: make the API hold exactly one token with the configured name and
 * description, writing only what differs. Precedence: the token handed over by the resource this
 * one replaces in the same run (a rename or update), else a token that already has the name
 * (adoption), else a token with one of the previous names (an explicit rename), else a new one.
 */
export async function applyToken(input: RuntimeContext): Promise<void> {
  const apply = applyRequest(input);
  const handoff = takeHandoff(apply.ctx, apply.scope, apply.name, apply.planned.handoffRun);
  const lastApplied = appliedOnThisAccount(apply.ctx, apply.scope, apply.api, apply.name);
  const managedId = await underNameLock(apply, (client) => applyUnderLock(apply, client, handoff, lastApplied));
  recordApplied(apply, managedId, handoff);
}

/** What this create half is asked for, from its environment with the resource's triggers spread in. */
interface ApplyRequest {
  readonly ctx: RuntimeContext;
  readonly scope: TokenScope;
  readonly name: string;
  /** Undefined when the construct does not manage the description: the token's own is kept. */
  readonly description: string | undefined;
  readonly previousNames: readonly string[];
  /** The account the token is on, as hand-offs, records and locks are keyed (see accountDigestOf). */
  readonly api: string;
  /** The same account as the run's files are keyed: with the credential's identity. */
  readonly account: AccountRef;
  /** What the plan showed: the run and the token's id. */
  readonly planned: Planned;
}

function applyRequest(input: RuntimeContext): ApplyRequest {
  const withTriggers = withTriggerEnv(input);
  const name = requireName(withTriggers.env[TokenEnv.NAME], TokenEnv.NAME);
  const description = withTriggers.env[TokenEnv.DESCRIPTION];
  const previousNames = parsePreviousNames(withTriggers.env[TokenEnv.PREVIOUS_NAMES], TokenEnv.PREVIOUS_NAMES);
  const scope = tokenScope(withTriggers.env);
  const planned = plannedOf(withTriggers);
  const ctx: RuntimeContext = { ...withTriggers, run: runOf(planned, scope) };
  const account = accountRefIn(ctx.env, scope.envPrefix, scope.baseUrl);
  return { ctx, scope, name, description, previousNames, api: accountDigestOf(scope, ctx.env), account, planned };
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
          staleAfterMs: lockStaleAfterMs(ctx.env),
          onWait: ctx.out.info,
        },
        () => fn(client),
      ),
    scope.envPrefix,
  );
}

/**
 * List, choose the token, check, then create it or bring it up to date; returns the id of the
 * token the construct now manages. Under the name lock, so no other create half of this name
 * lists between this one's list and its write.
 */
async function applyUnderLock(
  apply: ApplyRequest,
  client: ApiClient,
  handoff: Handoff | undefined,
  lastApplied: AppliedRecord | undefined,
): Promise<string> {
  const { tokens, since: listedSince } = await runTokens(apply.ctx, client, apply.account);
  const target = findTarget(apply, tokens, handoff, lastApplied);
  refuseOtherThanPlanned(apply.planned, apply.scope, apply.name, target?.token);
  const leftBehind = oldTokenLeftBehind(apply, tokens, lastApplied);
  if (!target) return createNewToken(apply, client, handoff, leftBehind, listedSince);
  return bringUpToDate(apply, client, target, leftBehind, lastApplied);
}

/** The token an apply ends on, and how it was found: its outcome line says so. */
interface Target {
  readonly token: TokenView;
  readonly foundBy: "handoff" | "name" | "pending record" | "previous name";
}

/**
 * The token to apply, by the precedence applyToken states, with a pending record of this folder
 * before the previous names; undefined when a new one is to be created. Fails, before any write,
 * where choosing would be a guess or a rename would take a name another token has.
 */
function findTarget(
  apply: ApplyRequest,
  tokens: readonly TokenView[],
  handoff: Handoff | undefined,
  lastApplied: AppliedRecord | undefined,
): Target | undefined {
  const handedOver = handedOverToken(tokens, handoff);
  const named = tokenOfThisName(apply, tokens, lastApplied, handedOver);
  refuseRenameOntoAnother(apply.name, handedOver, named);
  if (handedOver) return { token: handedOver, foundBy: "handoff" };
  if (named) return { token: named, foundBy: "name" };
  const recorded = pendingRecordedToken(apply, tokens, lastApplied);
  if (recorded) return { token: recorded, foundBy: "pending record" };
  const previous = pickByPreviousNames(tokens, apply.previousNames, apply.ctx.out.warn);
  return previous ? { token: previous, foundBy: "previous name" } : undefined;
}

/**
 * The token the replaced resource handed over. By id when the destroy half learnt it: a token
 * gone since is not replaced by another one that happens to have the old name (another
 * deployment's, perhaps). By name only without an id.
 */
function handedOverToken(tokens: readonly TokenView[], handoff: Handoff | undefined): TokenView | undefined {
  if (handoff === undefined) return undefined;
  // The destroy half asks the API nothing (see token-release.ts): the id is what this folder last
  // applied. Gone since: never another token of the old name. Renamed outside Terraform since: the
  // token the old name designates now, as a look-up by name at release would have found.
  if (handoff.id === undefined) return pickByName(tokens, handoff.name);
  const byId = tokens.find((t) => t.id === handoff.id);
  if (byId === undefined || foldTokenName(byId.name) === foldTokenName(handoff.name)) return byId;
  return pickByName(tokens, handoff.name);
}

/**
 * The token that already has the configured name: among several, the handed-over one, else the
 * first (see tokensNamed), and the duplicates are warned about.
 */
function tokenOfThisName(
  apply: ApplyRequest,
  tokens: readonly TokenView[],
  lastApplied: AppliedRecord | undefined,
  handedOver: TokenView | undefined,
): TokenView | undefined {
  const { ctx, name } = apply;
  // Exact matches, else matches after trimming and case-folding: never create when one exists.
  const { matches, exact } = tokensNamed(tokens, name, lastApplied?.id);
  if (!exact && matches.length > 1 && !(handedOver && matches.some((t) => t.id === handedOver.id))) {
    throw new Error(
      `no API token is named exactly "${name}", but ${matches.length} have that name after trimming and case-folding ` +
        `(${matches.map((t) => `${JSON.stringify(t.name)} id ${t.id}`).join(", ")}), and a server may store names that way: ` +
        `not creating another, and not choosing one. Revoke or rename all but one in the console. Nothing was changed.`,
    );
  }
  if (matches.length > 1) ctx.out.warn(duplicatesWarning(name, matches));
  return matches.length > 1 && handedOver ? (matches.find((t) => t.id === handedOver.id) ?? matches[0]) : matches[0];
}

/** A rename of the handed-over token onto a name another token already has would leave two of that name. */
function refuseRenameOntoAnother(name: string, handedOver: TokenView | undefined, named: TokenView | undefined): void {
  if (!handedOver || !named || named.id === handedOver.id) return;
  throw new Error(
    `cannot rename API token "${handedOver.name}" (id ${handedOver.id}) to "${name}": ` +
      `API token ${named.id} already has that name. Choose another name, or rename that token in the console. ` +
      `Nothing was changed.`,
  );
}

/** A token an unfinished apply from this folder wrote for this very name on this API. */
function pendingRecordedToken(
  apply: ApplyRequest,
  tokens: readonly TokenView[],
  lastApplied: AppliedRecord | undefined,
): TokenView | undefined {
  if (!lastApplied?.pending || lastApplied.name !== apply.name || lastApplied.api !== apply.api) return undefined;
  return tokens.find((t) => t.id === lastApplied.id);
}

/**
 * The token this folder applied last under another name, when it still has that name: if this
 * apply ends on another token, that one stays active (see warnOldTokenActive).
 */
function oldTokenLeftBehind(
  apply: ApplyRequest,
  tokens: readonly TokenView[],
  lastApplied: AppliedRecord | undefined,
): TokenView | undefined {
  if (!lastApplied || lastApplied.name === apply.name) return undefined;
  // Still under its old name (as the API spells it: a server may have trimmed or lower-cased it).
  return tokens.find((t) => t.id === lastApplied.id && foldTokenName(t.name) === foldTokenName(lastApplied.name));
}

/** No token to apply: a new one, recorded as pending at once, then checked. */
async function createNewToken(
  apply: ApplyRequest,
  client: ApiClient,
  handoff: Handoff | undefined,
  leftBehind: TokenView | undefined,
  listedSince: number,
): Promise<string> {
  const { ctx, name } = apply;
  if (handoff) {
    ctx.out.info(`the API token "${handoff.name}" released by the replaced resource no longer exists; creating a new one`);
  }
  const created = await client.createToken({ name, description: apply.description });
  ctx.out.addSecrets([created.token]);
  recordPending(apply, created.id);
  // The client has already said "adopted" when a look-up found an earlier attempt's token.
  if (!wasAdoptedAfterLostResponse(created)) ctx.out.info(`created API token "${created.name}" (id ${created.id})`);
  await recordRunWrite(ctx, apply.account, created);
  warnOldTokenActive(ctx, apply.scope, leftBehind, name, created.id);
  checkStoredName(ctx, created, name);
  await lookAgainAfterCreate(ctx, client, created, name, listedSince);
  return created.id;
}

/** Writes only what differs from the configuration (name, description), then says in one line what was done. */
async function bringUpToDate(
  apply: ApplyRequest,
  client: ApiClient,
  target: Target,
  leftBehind: TokenView | undefined,
  lastApplied: AppliedRecord | undefined,
): Promise<string> {
  const { ctx, name, description } = apply;
  const token = target.token;
  warnOldTokenActive(ctx, apply.scope, leftBehind, name, token.id);
  const changes = changesTo(apply, token);
  if (changes.length > 0) {
    recordPending(apply, token.id);
    // An unmanaged description is sent back as it is, whatever the server does with an omitted one.
    const updated = await client.updateToken(token.id, { name, description: description ?? token.description ?? undefined });
    await recordRunWrite(ctx, apply.account, updated);
    checkStoredName(ctx, updated, name);
  }
  ctx.out.info(outcomeLine(name, target, changes, lastApplied));
  return token.id;
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

/** Written before anything can fail after a write: a retry adopts this token (see AppliedRecord.pending). */
function recordPending(apply: ApplyRequest, id: string): void {
  const { ctx, scope, name, api } = apply;
  const identity = apply.account.identity;
  writeAppliedRecord(ctx.cwd, {
    key: scope.key,
    workspace: scope.workspace,
    id,
    name,
    api,
    identity,
    pending: true,
    at: new Date().toISOString(),
  });
}

/** The API is in the wanted state: this folder records the token, and a hand-off taken is spent. */
function recordApplied(apply: ApplyRequest, managedId: string, handoff: Handoff | undefined): void {
  const { ctx, scope, name, api } = apply;
  const identity = apply.account.identity;
  writeAppliedRecord(ctx.cwd, {
    key: scope.key,
    workspace: scope.workspace,
    id: managedId,
    name,
    api,
    identity,
    at: new Date().toISOString(),
  });
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
    const since = await newestSince(client, ctx, { createdAt: Math.min(listedNewest, created.created_at), ids: [created.id] });
    again = tokensNamed(since ?? (await allTokens(client, ctx)), name, created.id).matches;
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
export function checkStoredName(ctx: RuntimeContext, stored: { readonly id: string; readonly name: string }, wanted: string): void {
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
