import { readFileSync, rmSync } from "node:fs";

import type { ApiClient } from "../../client/client";
import { GpuCloudError } from "../../client/errors";
import type { TokensSinceMark } from "../../client/pagination";
import type { RunRef, RuntimeContext } from "../../shared/context";
import { errorMessage } from "../../shared/error-message";
import type { AccountRef } from "../account-identity";
import { writePrivateFile } from "../io/private-file";
import { withFileLock } from "../locks/file-lock";
import { lockStaleAfterMs, lockWaitMs } from "../locks/lock-bounds";
import { allTokens, type TokenView } from "../names/token-list";
import { openRunFolder, runFilePath } from "./run-folder";

/**
 * The token list as the provisioners of one apply see it (issue 24). Each provisioner is its own
 * process and used to walk the whole account, twice for a create: on an account of thousands of
 * tokens, that is where an apply's requests went. Now the first provisioner of the run that needs
 * the list walks it once, under a lock, and keeps the walk in a file of the run (./run-folder.ts:
 * no other run, workspace or account can arrive at its name); each one then
 * asks only for what appeared since, newest first (usually one page), and records its own writes
 * there, so that a provisioner that takes a name after another one wrote it sees that write.
 *
 * The file holds ids, names, descriptions and creation times: never a token's value (a token
 * taken from it has `token` ""; no provisioner needs another token's value). Another party's
 * rename or revocation during the apply is not seen: a write to a revoked token fails and the
 * next apply converges; a create is still checked by name against what appeared since.
 */

/** Newest-first page size: a create usually finds what appeared since in one request. */
const NEWEST_PAGE = 50;

interface Walked {
  readonly id: string;
  readonly name: string;
  readonly description?: string | null;
  readonly created_at: number;
}

interface WalkFile {
  readonly run: string;
  /**
   * The mark: what appeared since is asked from here, `>=` so that tokens created in the mark's
   * second after it was taken are read again rather than missed. First the newest created_at of
   * the walk; then moved forward by each complete newest-first read (see mergeNewest). Never by
   * the writes recorded here: their creation times would hide tokens others created between the
   * last read and those writes. The tokens of the file at or after the mark (those at it, and
   * this run's creates) are what a newest-first read must list to prove its order.
   */
  readonly since: number;
  /** The newest created_at of the walk itself: every token this run created is at or after it. */
  readonly walked: number;
  readonly tokens: readonly Walked[];
}

/** What a provisioner lists: the tokens, and the created_at from which newer ones were asked for. */
export interface RunTokens {
  readonly tokens: TokenView[];
  readonly since: number;
}

const walked = (t: TokenView): Walked => ({ id: t.id, name: t.name, description: t.description, created_at: t.created_at });
const asView = (t: Walked): TokenView => ({ ...t, token: "" });

/** The run's walk file for `account`; throws when the run folder cannot be used. */
function walkPath(ctx: RuntimeContext, account: AccountRef, run: RunRef): string {
  return runFilePath(openRunFolder(ctx.env), { cwd: ctx.cwd, ...run, ...account }, "walk");
}

function readWalk(file: string, run: RunRef): WalkFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as WalkFile;
    const marks = typeof parsed.since === "number" && typeof parsed.walked === "number";
    return parsed.run === run.nonce && Array.isArray(parsed.tokens) && marks ? parsed : undefined;
  } catch {
    return undefined;
  }
}

const newestOf = (tokens: readonly { created_at: number }[]): number => tokens.reduce((m, t) => Math.max(m, t.created_at), 0);

/** A newest-first read from `from`, with the ids that prove its order: the walk's tokens known at or after it. */
const markOf = (walk: WalkFile, from: number): TokensSinceMark => ({
  createdAt: from,
  ids: walk.tokens.filter((t) => t.created_at >= from).map((t) => t.id),
});

/** An error of the folder (a lock, a file), as opposed to the API's: the walk is then done without the file. */
const isFolderError = (err: unknown): boolean => !(err instanceof GpuCloudError);

function lockOf(ctx: RuntimeContext) {
  return {
    cwd: ctx.cwd,
    waitMs: lockWaitMs(ctx.env),
    staleAfterMs: lockStaleAfterMs(ctx.env),
    onWait: ctx.out.info,
    holder: "listing the API tokens for this terraform run",
  };
}

/**
 * The account's tokens for a provisioner (see above): the run's walk plus what appeared since;
 * a walk of its own outside a run, or where the server does not list newest first.
 */
export async function runTokens(ctx: RuntimeContext, client: ApiClient, account: AccountRef): Promise<RunTokens> {
  const own = async (): Promise<RunTokens> => {
    const tokens = await allTokens(client, ctx);
    return { tokens, since: newestOf(tokens) };
  };
  const run = ctx.run;
  if (run === undefined) return own();
  let walk: WalkFile | undefined;
  let fresh: TokenView[] | undefined;
  let file: string;
  try {
    file = walkPath(ctx, account, run);
    const walkFile = file;
    walk = readWalk(walkFile, run);
    walk ??= await withFileLock(`${walkFile}.lock`, lockOf(ctx), async () => {
      const meanwhile = readWalk(walkFile, run);
      if (meanwhile) return meanwhile;
      fresh = await allTokens(client, ctx);
      const taken: WalkFile = { run: run.nonce, since: newestOf(fresh), walked: newestOf(fresh), tokens: fresh.map(walked) };
      writePrivateFile(walkFile, JSON.stringify(taken));
      return taken;
    });
  } catch (err) {
    if (!isFolderError(err)) throw err;
    ctx.out.warn(`could not share this run's walk of the API tokens (${errorMessage(err)}); walking them for this provisioner alone`);
    return fresh ? { tokens: fresh, since: newestOf(fresh) } : own();
  }
  if (fresh) return { tokens: fresh, since: walk.since };
  const tokens = await withNewest(ctx, client, walk, walk.since);
  if (tokens === undefined) return own();
  await mergeNewest(ctx, file, run, tokens.read);
  return { tokens: tokens.all, since: Math.max(walk.since, newestOf(tokens.read)) };
}

/**
 * The walk's tokens with those listed from `from`, newest first (`all`: a listed token replaces
 * its walked entry and carries its value), and that read. Undefined when the read does not prove
 * that the server lists newest first.
 */
async function withNewest(
  ctx: RuntimeContext,
  client: ApiClient,
  walk: WalkFile,
  from: number,
): Promise<{ all: TokenView[]; read: TokenView[] } | undefined> {
  const read = await newestSince(client, ctx, markOf(walk, from));
  if (read === undefined) return undefined;
  const byId = new Map<string, TokenView>(walk.tokens.map((t) => [t.id, asView(t)]));
  for (const t of read) byId.set(t.id, t);
  return { all: [...byId.values()], read };
}

/**
 * Merges a complete, order-proven newest-first read into the run's walk, under its lock: tokens
 * it did not hold are added (held ones stay, this run's recorded writes among them), and the mark
 * moves to the read's newest created_at. Unlike a write's creation time, that is safe: the read
 * listed every token from the old mark down from the front of the list, so every token older than
 * its newest is in the walk now; one created after its first page was created later than that
 * newest, or in the same second, which `>=` reads again. Walks meanwhile only grow, so the larger
 * of two marks holds for their union. Best effort: without the merge the next read starts earlier.
 */
async function mergeNewest(ctx: RuntimeContext, file: string, run: RunRef, read: readonly TokenView[]): Promise<void> {
  try {
    await withFileLock(`${file}.lock`, lockOf(ctx), async () => {
      const walk = readWalk(file, run);
      if (walk === undefined) return;
      const held = new Set(walk.tokens.map((t) => t.id));
      const added = read.filter((t) => !held.has(t.id)).map(walked);
      const since = Math.max(walk.since, newestOf(read));
      if (added.length > 0 || since !== walk.since)
        writePrivateFile(file, JSON.stringify({ ...walk, since, tokens: [...walk.tokens, ...added] }));
    });
  } catch (err) {
    if (!isFolderError(err)) throw err;
    ctx.out.warn(`could not add the newest API tokens to this run's walk (${errorMessage(err)}); the next look reads from its older mark`);
  }
}

/**
 * For the stack's read after the writes: the run's walk plus what appeared since, only when a
 * provisioner of this run took the walk; undefined otherwise, and never a walk file of its own.
 * That read may run at plan time (a group without writes whose read has an instance), and a walk
 * taken then would be used by the apply's provisioners, a saved plan's hours later, blind to the
 * renames made meanwhile. It wants the values of the tokens this run created, which the walk does
 * not keep: it reads from the walk's mark, or from the oldest creation time among the tokens of
 * this run that `needed` picks (those whose values its constructs take) when that is older.
 */
export async function takenRunTokens(
  ctx: RuntimeContext,
  client: ApiClient,
  account: AccountRef,
  needed: (tokens: readonly TokenView[]) => readonly TokenView[] = () => [],
): Promise<TokenView[] | undefined> {
  const run = ctx.run;
  if (run === undefined) return undefined;
  let walk: WalkFile | undefined;
  try {
    walk = readWalk(walkPath(ctx, account, run), run);
  } catch {
    return undefined; // no run folder: no walk of the run to take
  }
  if (walk === undefined) return undefined;
  const created = needed(walk.tokens.map(asView)).filter((t) => t.created_at >= walk.walked);
  const from = Math.min(walk.since, ...created.map((t) => t.created_at));
  return (await withNewest(ctx, client, walk, from))?.all;
}

/**
 * The tokens created at or after `mark.createdAt` (the API's created_at), newest first (the
 * client's listTokensSince: overlapping pages, read again when the list shifts); undefined unless
 * the read proves that order by listing `mark.ids` first. Every value learnt is hidden from the
 * log from then on.
 */
export async function newestSince(client: ApiClient, ctx: RuntimeContext, mark: TokensSinceMark): Promise<TokenView[] | undefined> {
  const found = await client.listTokensSince(mark, { pageSize: NEWEST_PAGE });
  if (found !== undefined) ctx.out.addSecrets(found.map((t) => t.token));
  return found;
}

/**
 * Records a token this provisioner created or wrote in the run's walk, before its name lock is
 * released: a provisioner that takes that name next must see it (a rename changes no created_at,
 * so it would not appear among the newest).
 */
export async function recordRunWrite(ctx: RuntimeContext, account: AccountRef, token: TokenView): Promise<void> {
  const run = ctx.run;
  if (run === undefined) return;
  let file: string | undefined;
  try {
    file = walkPath(ctx, account, run);
    const walkFile = file;
    await withFileLock(`${walkFile}.lock`, lockOf(ctx), async () => {
      const walk = readWalk(walkFile, run);
      if (walk === undefined) return;
      writePrivateFile(walkFile, JSON.stringify({ ...walk, tokens: [...walk.tokens.filter((t) => t.id !== token.id), walked(token)] }));
    });
  } catch (err) {
    // The write itself succeeded; a later create of this name in this run walks the API instead.
    ctx.out.warn(
      `could not record API token ${token.id} in this run's walk (${errorMessage(err)}); removing the walk, so the next look is a full one`,
    );
    if (file !== undefined) rmSync(file, { force: true });
  }
}
