import type { ApiClient } from "../client/client";
import { withClient, type RuntimeContext } from "../shared/context";
import { errorMessage } from "./error-message";
import { readAppliedRecord, removeHandoff, writeAppliedRecord } from "./handoff";
import { takeHandoff } from "./handoff-takeover";
import { lockStaleAfterMs, lockWaitMs, withNameLock } from "./name-lock";
import { newestSince, recordRunWrite, runTokens } from "./run-walk";
import { wasAdoptedAfterLostResponse } from "../client/ambiguous-create";
import { foldTokenName } from "../client/operations";
import { PLANNED_ID_ENV, TokenEnv } from "./protocol";
import {
  allTokens,
  duplicatesWarning,
  parsePreviousNames,
  pickByName,
  pickByPreviousNames,
  requireName,
  tokensNamed,
  type TokenView,
} from "./token-names";
import { accountDigestOf, accountLabel, apiUrlOf, constructLabel, runOf, tokenScope, withTriggerEnv, type TokenScope } from "./token-scope";

/**
 * Creation-time provisioner: make the API hold exactly one token with the configured name and
 * description, writing only what differs. Precedence: the token handed over by the resource this
 * one replaces in the same run (a rename or update), else a token that already has the name
 * (adoption), else a token with one of the previous names (an explicit rename), else a new one.
 */
export async function applyToken(input: RuntimeContext): Promise<void> {
  const ctx = withTriggerEnv(input);
  const name = requireName(ctx.env[TokenEnv.NAME], TokenEnv.NAME);
  const description = ctx.env[TokenEnv.DESCRIPTION];
  const previousNames = parsePreviousNames(ctx.env[TokenEnv.PREVIOUS_NAMES], TokenEnv.PREVIOUS_NAMES);
  const scope = tokenScope(ctx.env);
  const handoff = takeHandoff(ctx, scope, name, runOf(ctx));
  const api = accountDigestOf(scope, ctx.env);
  const lastApplied = appliedOnThisAccount(ctx, scope, api, name);

  const apiUrl = apiUrlOf(scope, ctx.env);
  /** Written before anything can fail after a write: a retry adopts this token (see AppliedRecord.pending). */
  const recordPending = (id: string): void =>
    writeAppliedRecord(ctx.cwd, { key: scope.key, workspace: scope.workspace, id, name, api, pending: true, at: new Date().toISOString() });
  const managedId = await withClient(
    ctx,
    scope.baseUrl,
    (client) =>
      withNameLock(
        ctx.cwd,
        apiUrl,
        name,
        lockWaitMs(ctx.env),
        ctx.out.info,
        async () => {
          const { tokens, since: listedSince } = await runTokens(ctx, client, api);
          // By id when the destroy half learnt it: a token gone since is not replaced by another one
          // that happens to have the old name (another deployment's, perhaps). By name only without an id.
          const handedOver =
            handoff === undefined
              ? undefined
              : handoff.id !== undefined
                ? tokens.find((t) => t.id === handoff.id)
                : pickByName(tokens, handoff.name);
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
          const named = matches.length > 1 && handedOver ? (matches.find((t) => t.id === handedOver.id) ?? matches[0]) : matches[0];

          if (handedOver && named && named.id !== handedOver.id) {
            throw new Error(
              `cannot rename API token "${handedOver.name}" (id ${handedOver.id}) to "${name}": ` +
                `API token ${named.id} already has that name. Choose another name, or rename that token in the console. ` +
                `Nothing was changed.`,
            );
          }
          // A token an unfinished apply from this folder wrote for this very name on this API.
          const recorded =
            handedOver || named || !lastApplied?.pending || lastApplied.name !== name || lastApplied.api !== api
              ? undefined
              : tokens.find((t) => t.id === lastApplied.id);
          const previous = handedOver || named || recorded ? undefined : pickByPreviousNames(tokens, previousNames, ctx.out.warn);
          const target: TokenView | undefined = handedOver ?? named ?? recorded ?? previous;
          refuseOtherThanPlanned(ctx, scope, name, target);
          // Still under its old name (as the API spells it: a server may have trimmed or lower-cased it).
          const leftBehind = lastApplied
            ? tokens.find((t) => t.id === lastApplied.id && foldTokenName(t.name) === foldTokenName(lastApplied.name))
            : undefined;
          const warnLeftBehind = (managed: string): void => {
            if (leftBehind && leftBehind.id !== managed && lastApplied && lastApplied.name !== name) {
              warnOldTokenActive(ctx, scope, leftBehind, name, managed);
            }
          };

          if (!target) {
            if (handoff) {
              ctx.out.info(`the API token "${handoff.name}" released by the replaced resource no longer exists; creating a new one`);
            }
            const created = await client.createToken({ name, description });
            ctx.out.addSecrets([created.token]);
            recordPending(created.id);
            // The client has already said "adopted" when a look-up found an earlier attempt's token.
            if (!wasAdoptedAfterLostResponse(created)) ctx.out.info(`created API token "${created.name}" (id ${created.id})`);
            await recordRunWrite(ctx, api, created);
            warnLeftBehind(created.id);
            checkStoredName(ctx, created, name);
            await lookAgainAfterCreate(ctx, client, created, name, listedSince);
            return created.id;
          }
          warnLeftBehind(target.id);
          const changes: string[] = [];
          if (target.name !== name) changes.push(`renamed "${target.name}" to "${name}"`);
          if (description !== undefined && (target.description ?? "") !== description) changes.push("updated the description");
          const what = changes.length === 0 ? "no change" : changes.join(", ");
          if (changes.length > 0) {
            recordPending(target.id);
            // An unmanaged description is sent back as it is, whatever the server does with an omitted one.
            const updated = await client.updateToken(target.id, { name, description: description ?? target.description ?? undefined });
            await recordRunWrite(ctx, api, updated);
            checkStoredName(ctx, updated, name);
          }
          // One line per outcome.
          if (target === previous) {
            ctx.out.info(`no API token is named "${name}"; renaming "${previous.name}" (id ${previous.id}), a previous name: ${what}`);
          } else if (target === recorded) {
            ctx.out.info(
              `adopted API token "${target.name}" (id ${target.id}), which an unfinished apply from this folder wrote for "${name}", ` +
                `instead of creating another: ${what}`,
            );
          } else if (target === handedOver || lastApplied?.id === target.id) {
            // The token this resource already managed (handed over in this run, or applied before from here).
            ctx.out.info(
              changes.length === 0
                ? `API token "${name}" (id ${target.id}) is up to date; no change`
                : `API token id ${target.id}: ${what}`,
            );
          } else {
            ctx.out.info(`adopted existing API token "${target.name}" (id ${target.id}) instead of creating another: ${what}`);
          }
          return target.id;
        },
        lockStaleAfterMs(ctx.env),
        scope.envPrefix,
      ),
    scope.envPrefix,
  );
  writeAppliedRecord(ctx.cwd, { key: scope.key, workspace: scope.workspace, id: managedId, name, api, at: new Date().toISOString() });
  // Only once the API is in the wanted state: a failed run keeps the claimed hand-off for the retry.
  // (Without a hand-off taken, one there is not this run's to remove: see takeHandoff.)
  if (handoff) removeHandoff(ctx.cwd, scope.workspace, scope.key);
}

/**
 * The plan showed consumers of tokenId and token the id its read found (PLANNED_ID_ENV, "" when it
 * found none); an apply that would end on another token, or create one, would hand them a stale id.
 * Checked before any write, so nothing is changed.
 */
function refuseOtherThanPlanned(ctx: RuntimeContext, scope: TokenScope, name: string, target: TokenView | undefined): void {
  const planned = ctx.env[PLANNED_ID_ENV];
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
    const since = await newestSince(client, ctx, Math.min(listedNewest, created.created_at));
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
function appliedOnThisAccount(ctx: RuntimeContext, scope: TokenScope, account: string, name: string) {
  const record = readAppliedRecord(ctx.cwd, scope.workspace, scope.key, ctx.out.warn);
  if (!record || record.api === undefined || record.api === account) return record;
  ctx.out.warn(
    `API token "${record.name}" (id ${record.id}), which ${constructLabel(scope)} managed on another account or API address, ` +
      `stays ACTIVE there: a token named "${name}" is created or adopted on this account${accountLabel(scope)} instead. ` +
      `Revoke token ${record.id} on the other account if it is not needed.`,
  );
  return undefined;
}

/**
 * A rename that became a new (or adopted) token: the token this construct managed before, by
 * this folder's record, still has its old name. This happens under create_before_destroy, where
 * Terraform runs no destroy-time provisioner and so no hand-off exists.
 */
function warnOldTokenActive(ctx: RuntimeContext, scope: TokenScope, old: TokenView, name: string, managedId: string): void {
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
