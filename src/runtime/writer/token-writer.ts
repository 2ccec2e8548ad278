import { wasAdoptedAfterLostResponse } from "../../client/ambiguous-create";
import type { ApiClient } from "../../client/client";
import { foldTokenName } from "../../protocol";
import { type RuntimeContext, withClient } from "../../shared/context";
import { errorMessage } from "../../shared/error-message";
import { accountRefIn, ledgerAccountOf } from "../account-identity";
import type { TokenView } from "../names/token-list";
import { notThePlansAccount } from "../reads/account-checks";
import { LatestTokens } from "./latest-tokens";
import { decideWrite, type WantedToken, type WriteDecision } from "./write-decision";
import { readWriterInput } from "./writer-input";

/** Creates per wave: a wave is sent within about a second of the read before it, and two waves fit one page of that read. */
const WAVE_SIZE = 20;
/** Requests of one wave in flight at once. */
const CONCURRENCY = 8;
/** What each write adds to the writer's budget (GPUCLOUD_TIMEOUT_SECONDS bounds the rest): 1,000 creates fit at 2 per second. */
const BUDGET_PER_WRITE_MS = 500;

/**
 * The token writer (`token-writer`): the create-time provisioner of the stack's writer of one
 * account, which makes every write of the apply there in this one process. One login and one walk
 * of the token list; then the updates (renames, descriptions) of the tokens the plan found, and the
 * creates in waves, each decided on a newest-first read taken right before it, so that a name
 * another party created meanwhile is adopted, never created twice. After a fault it finishes every
 * other write and fails naming the tokens it could not write: the next plan shows each of them.
 */
export async function writeTokens(ctx: RuntimeContext): Promise<void> {
  const input = readWriterInput(ctx.env, ctx.cwd);
  const account = accountRefIn(ctx.env, input.envPrefix, input.baseUrl);
  // Before anything is written: the plan's checks of the account were for these credentials.
  const refused = notThePlansAccount(input.ticket, ledgerAccountOf(account), true);
  if (refused !== undefined) throw new Error(refused);
  const run = new WriterRun(ctx, input.tokens);
  await withClient(ctx, input.baseUrl, (client) => run.write(client), input.envPrefix);
  run.finish();
}

/** A decision the writer carries out: a token held by another is decided again in its wave (see decideInWave). */
type Decided = Exclude<WriteDecision, { readonly kind: "held" }>;

/** What became of one token. */
type Outcome = { readonly ok: true } | { readonly ok: false; readonly reason: string };

class WriterRun {
  private readonly outcomes = new Map<string, Outcome>();
  /**
   * The ids of tokens that are one construct's: the plan's, those adopted or created by this run. No
   * other token of the run adopts one by its name or a previous name.
   */
  private readonly claimed: Set<string>;
  /** Tokens that needed a write, or a look right before one (adoptions, creates); and those done. */
  private total = 0;
  private done = 0;
  private stopped = false;

  constructor(
    private readonly ctx: RuntimeContext,
    private readonly wanted: readonly WantedToken[],
  ) {
    ctx.stop?.addEventListener("abort", () => (this.stopped = true));
    this.claimed = new Set(wanted.map((w) => w.plannedId).filter((id) => id !== ""));
  }

  async write(client: ApiClient): Promise<void> {
    const latest = await LatestTokens.walk(this.ctx, client);
    const creates: WantedToken[] = [];
    const updates: (() => Promise<void>)[] = [];
    const clashes = nameClashes(this.wanted);
    for (const w of this.wanted) {
      const clash = clashes.get(w);
      if (clash !== undefined) {
        this.fail(w, `${clash}; give each ApiToken its own names`);
        continue;
      }
      const decision = decideWrite(w, latest.tokens, this.claimed);
      if (decision.kind === "update" || decision.kind === "none") this.claimed.add(decision.token.id);
      if (decision.kind === "create" || decision.kind === "held") creates.push(w);
      else if (decision.kind === "none" && !decision.adopted) this.outcomes.set(w.path, { ok: true });
      else updates.push(() => this.carryOut(client, w, decision, latest));
    }
    this.total = updates.length + creates.length;
    // The budget fits the work: GPUCLOUD_TIMEOUT_SECONDS bounded the login and the walk, each write adds its share.
    const extra = this.total * BUDGET_PER_WRITE_MS;
    client.extendDeadline(extra);
    this.ctx.extendWatchdog?.(extra);
    await inParallel(updates, CONCURRENCY);
    for (let i = 0; i < creates.length && !this.stopped; i += WAVE_SIZE) {
      this.ctx.out.info(`${this.done} of ${this.total} tokens written; ${creates.length - i} to create`);
      const wave = creates.slice(i, i + WAVE_SIZE);
      try {
        await latest.refresh();
      } catch (err) {
        for (const w of creates.slice(i)) this.fail(w, `the read before its create failed: ${errorMessage(err)}`);
        return;
      }
      await inParallel(
        wave.map((w) => () => this.carryOut(client, w, this.decideInWave(w, latest), latest)),
        CONCURRENCY,
      );
    }
  }

  /** A create's decision, taken again on the read right before its wave: a token adopted now is claimed at once. */
  private decideInWave(w: WantedToken, latest: LatestTokens): Decided {
    const decision = decideWrite(w, latest.tokens, this.claimed);
    if (decision.kind === "update" || decision.kind === "none") this.claimed.add(decision.token.id);
    if (decision.kind !== "held") return decision;
    return {
      kind: "refuse",
      reason:
        `API token ${decision.token.id} has this name and is another ApiToken's of this stack (the plan gave it to that one, ` +
        `which renames it away); that rename was not done, so no second token of the name was created: apply again once it is`,
    };
  }

  /** One token's write (or none), reported in one line. Counted among the `total` only when it needed a look. */
  private async carryOut(client: ApiClient, w: WantedToken, decision: Decided, latest: LatestTokens): Promise<void> {
    if (this.stopped) return;
    try {
      if (decision.kind === "refuse") return this.fail(w, decision.reason);
      if (decision.kind === "create") {
        const created = await client.createToken({ name: w.name, description: w.description });
        this.claimed.add(created.id);
        this.ctx.out.addSecrets([created.token]);
        latest.record(created);
        this.checkStoredName(w, created);
        if (!wasAdoptedAfterLostResponse(created))
          this.ctx.out.info(`created API token "${created.name}" (id ${created.id}) for ${w.path}`);
      } else if (decision.kind === "update") {
        const description = w.description ?? decision.token.description ?? undefined;
        const updated = await client.updateToken(decision.token.id, { name: w.name, description });
        latest.record(updated);
        this.checkStoredName(w, updated);
        const how = decision.adopted ? `adopted existing API token "${decision.token.name}"` : `API token "${decision.token.name}"`;
        this.ctx.out.info(`${how} (id ${decision.token.id}) for ${w.path}: ${decision.changes.join(", ")}`);
      } else if (decision.adopted) {
        this.ctx.out.info(`adopted existing API token "${decision.token.name}" (id ${decision.token.id}) for ${w.path}: no change`);
      }
      this.outcomes.set(w.path, { ok: true });
      this.done++;
    } catch (err) {
      this.fail(w, this.ctx.out.redact(errorMessage(err)));
    }
  }

  private fail(w: WantedToken, reason: string): void {
    this.outcomes.set(w.path, { ok: false, reason });
  }

  /**
   * The name the API stored. Another spelling that folds to the same is accepted (every look-up
   * matches that way), and the log says so (docs/token-lifecycle.md); anything else fails this
   * token, whose id the message gives.
   */
  private checkStoredName(w: WantedToken, stored: TokenView): void {
    if (stored.name === w.name) return;
    if (foldTokenName(stored.name) === foldTokenName(w.name)) {
      this.ctx.out.info(
        `the API stored API token ${stored.id}'s name as ${JSON.stringify(stored.name)} (it trims or lower-cases names); ` +
          `names are matched that way too, so it is found as ${JSON.stringify(w.name)}`,
      );
      return;
    }
    throw new Error(
      `the API stored API token ${stored.id} as ${JSON.stringify(stored.name)}, not the name requested, ${JSON.stringify(w.name)}; ` +
        `set the ApiToken's name to ${JSON.stringify(stored.name)}, or rename the token in the console`,
    );
  }

  /** Fails the apply naming every token not written (the others are), with what to do. */
  finish(): void {
    const failed = this.wanted.filter((w) => this.outcomes.get(w.path)?.ok === false);
    const notReached = this.wanted.filter((w) => !this.outcomes.has(w.path) && this.stopped);
    if (failed.length === 0 && notReached.length === 0) {
      if (this.total > 0) this.ctx.out.info(`${this.done} of ${this.total} tokens written`);
      return;
    }
    const lines = [
      ...failed.map((w) => `${w.path} ("${w.name}"): ${(this.outcomes.get(w.path) as { reason: string }).reason}`),
      ...notReached.map((w) => `${w.path} ("${w.name}"): not written, the writer was stopped`),
    ];
    throw new Error(
      `${lines.length} of ${this.wanted.length} API tokens were not written (every other one was):\n  ${lines.join("\n  ")}\n` +
        `The next plan shows each of them; apply again once the cause is mended.`,
    );
  }
}

/**
 * The tokens whose names clash with another token's of the writer (after trimming and case-folding): the
 * same name, or, for two tokens the plan found no id for, a previous name that is the other's name.
 * Synthesis refuses literal names that clash; names given as expressions reach here. Each with why.
 */
function nameClashes(wanted: readonly WantedToken[]): Map<WantedToken, string> {
  const byName = new Map<string, WantedToken[]>();
  for (const w of wanted) {
    const key = foldTokenName(w.name);
    byName.set(key, [...(byName.get(key) ?? []), w]);
  }
  const clashes = new Map<WantedToken, string>();
  for (const group of byName.values()) {
    if (group.length < 2) continue;
    for (const w of group) {
      const others = group.filter((o) => o !== w).map((o) => o.path);
      clashes.set(w, `${others.length === 1 ? `the ApiToken ${others[0]} has` : `the ApiTokens ${others.join(", ")} have`} this name too`);
    }
  }
  // A previous name counts only without a planned id: then which token is whose would depend on their order.
  for (const w of wanted.filter((t) => t.plannedId === "")) {
    for (const previous of w.previousNames ?? []) {
      const owner = byName.get(foldTokenName(previous))?.find((o) => o !== w && o.plannedId === "");
      if (owner === undefined) continue;
      clashes.set(w, `its previous name "${previous}" is the name of the ApiToken ${owner.path}`);
      clashes.set(owner, `its name is a previous name of the ApiToken ${w.path}`);
    }
  }
  return clashes;
}

/** Runs `tasks` with at most `limit` at once. */
async function inParallel(tasks: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}
