import type { RunTicket } from "../../protocol";
import type { RuntimeContext } from "../../shared/context";
import { type Handoff, readHandoff, releasedInRun, removeHandoff, writeHandoff } from "../records/handoff";
import { accountDigestOf, accountLabel, constructLabel, type TokenScope } from "./token-scope";

/**
 * The hand-off this create half may follow, or undefined. Only two kinds are followed: one
 * released in this same terraform run (the destroy half of this replacement, see releasedInRun),
 * and one that a create half already claimed for this very name (a rename whose write failed,
 * retried by a later run). Any other is dropped with a warning when following it would have renamed.
 */
export function takeHandoff(
  ctx: RuntimeContext,
  scope: TokenScope,
  name: string,
  planned: { readonly ticket?: RunTicket; readonly id: string },
): Handoff | undefined {
  const ticket = planned.ticket;
  const handoff = readHandoff(ctx.cwd, scope.workspace, scope.key, ctx.out.warn);
  if (!handoff) return undefined;
  if (handoff.api !== accountDigestOf(scope, ctx.env)) {
    // The account or API changed with this replacement (account, baseUrl or <prefix>BASE_URL): the
    // released token is on the old one, and a token of its name here may be another deployment's.
    removeHandoff(ctx.cwd, scope.workspace, scope.key);
    const which = handoff.id ? `"${handoff.name}" (id ${handoff.id})` : `"${handoff.name}"`;
    ctx.out.warn(
      `API token ${which} was released on another account or API address than this one${accountLabel(scope)}, so it is not taken over: ` +
        `a token named "${name}" is created or adopted on this account instead, and ${which} stays ACTIVE on the other. ` +
        `Revoke it there if it is not needed.`,
    );
    return undefined;
  }
  if (handoff.claimedBy === undefined && releasedInRun(handoff, ticket)) {
    // Claimed before anything is written, so that a failure below leaves a record the retry honours.
    const claimed: Handoff = { ...handoff, claimedBy: handoff.planTime, targetName: name };
    writeHandoff(ctx.cwd, claimed);
    return claimed;
  }
  if (handoff.claimedBy !== undefined && handoff.targetName === name && claimIsFresh(handoff)) {
    ctx.out.info(`finishing the rename of API token "${handoff.name}" to "${name}" that an earlier run started`);
    return handoff;
  }
  removeHandoff(ctx.cwd, scope.workspace, scope.key);
  // The plan showed that very token for this ApiToken (the state's ledger): it is renamed all the same (see findTarget).
  if (handoff.name !== name && (handoff.id === undefined || handoff.id !== planned.id)) {
    const which = handoff.id ? `"${handoff.name}" (id ${handoff.id})` : `"${handoff.name}"`;
    ctx.out.warn(
      `API token ${which} was released by an earlier terraform run (${handoff.releasedAt}), not by this one, ` +
        `so it is not taken over: a token named "${name}" is created or adopted instead, and ${which} stays as it is. ` +
        `To rename a token explicitly, add previousNames: ["${handoff.name}"] to ${constructLabel(scope)}.`,
    );
  }
  return undefined;
}

/**
 * How long a claimed hand-off (a rename whose write failed) is finished by a later run. A claim
 * can outlive its purpose: a tainted resource is destroyed without its destroy-time provisioner,
 * so nothing removes it, and the old token may meanwhile belong to someone else.
 */
export const CLAIMED_HANDOFF_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

function claimIsFresh(handoff: Handoff, now: number = Date.now()): boolean {
  const released = Date.parse(handoff.releasedAt);
  return Number.isFinite(released) && now - released <= CLAIMED_HANDOFF_MAX_AGE_MS;
}
