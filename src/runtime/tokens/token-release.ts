import { TokenEnv } from "../../protocol";
import type { RuntimeContext } from "../../shared/context";
import { errorMessage } from "../../shared/error-message";
import { readAppliedRecord, removeAppliedRecord } from "../records/applied-record";
import { writeHandoff } from "../records/handoff";
import { accountDigestOf, type TokenScope, tokenScope, withTriggerEnv } from "./token-scope";

/**
 * Destroy-time provisioner. It cannot tell a destroy from the first half of a replacement, so it
 * does what is right for both: it leaves a hand-off that only a create half of this same run may
 * take, and says so in an info line; the stack's roster warns about tokens that stay active.
 * (Under create_before_destroy Terraform does not run it at all.) It never fails, whatever the
 * state holds: a destroy must not be blocked by an API that cannot be reached or by damaged
 * triggers, since it changes nothing on the API.
 */
export async function releaseToken(input: RuntimeContext): Promise<void> {
  let ctx: RuntimeContext;
  let scope: TokenScope;
  try {
    ctx = withTriggerEnv(input);
    scope = tokenScope(ctx.env);
  } catch (err) {
    // A damaged or edited state (no `key` trigger): nothing to hand off.
    input.out.warn(
      `this resource's triggers cannot be read (${errorMessage(err)}; the state was edited or damaged): ` +
        `its API token is left as it is and stays ACTIVE (the GPU cloud API has no delete operation). Nothing was changed.`,
    );
    return;
  }
  try {
    await release(ctx, scope);
  } catch (err) {
    ctx.out.warn(
      `could not release API token "${ctx.env[TokenEnv.NAME] ?? ""}": ${ctx.out.redact(errorMessage(err))}. ` +
        `It is left as it is and stays ACTIVE; a replacing resource adopts it by name.`,
    );
  }
}

/**
 * Writes the hand-off without asking the API: a destroy-time provisioner sees only `self`, so it
 * cannot have the run's ticket and would log in and walk the account on its own, once per token of
 * a rename (APIs limit logins per minute). The create half of the same run finds the token, in the
 * walk it shares with the run: by the id this folder last applied under this name, else by name.
 */
async function release(ctx: RuntimeContext, scope: TokenScope): Promise<void> {
  const name = ctx.env[TokenEnv.NAME] ?? "";
  const api = accountDigestOf(scope, ctx.env);
  const lastApplied = readAppliedRecord(ctx.cwd, scope.workspace, scope.key, ctx.out.warn);
  const id = lastApplied !== undefined && lastApplied.name === name && lastApplied.api === api ? lastApplied.id : undefined;
  // The token is let go: a later create must not take this record for a rename it missed.
  removeAppliedRecord(ctx.cwd, scope.workspace, scope.key);
  const which = id ? `API token "${name}" (id ${id})` : `API token "${name}"`;
  writeHandoff(ctx.cwd, {
    key: scope.key,
    workspace: scope.workspace,
    id,
    name,
    // Without a plan time no create half takes it over (see releasedInRun).
    planTime: ctx.env[TokenEnv.PLAN_TIME] ?? "",
    api,
    releasedAt: new Date().toISOString(),
  });
  // Not a warning: this half cannot tell a replacement from a destroy, and a replacement is the everyday case.
  // A token that really stays behind (the stack destroyed, the ApiToken removed) is the stack's roster's to report.
  ctx.out.info(`released ${which} to the resource that replaces this one, if any`);
}
