import { readFileSync, rmSync } from "node:fs";

import type { ApiClient } from "../../client/client";
import { GpuCloudError } from "../../client/errors";
import type { TokensSinceMark } from "../../client/pagination";
import type { RunTicket } from "../../protocol";
import type { RuntimeContext } from "../../shared/context";
import { errorMessage } from "../../shared/error-message";
import type { AccountRef } from "../account-identity";
import { writePrivateFile } from "../io/private-file";
import { withFileLock } from "../locks/file-lock";
import { leaseMs, lockWaitMs } from "../locks/lock-bounds";
import { listNewestSince, type TokenView, walkAllTokens } from "../names/token-list";
import { openRunFolder, runFilePath } from "./run-folder";

/**
 * The token list as the scripts of one apply share it. The first create half that needs the list
 * walks the whole account; the walk goes into a file of the run's folder (./run-folder.ts), and
 * each later one asks only for what appeared since, newest first (usually one request). Each
 * records its own write there, since a rename changes no creation time and would not appear among
 * the newest. The file holds ids, names, descriptions and creation times, never a token's value.
 */

interface Walked {
  readonly id: string;
  readonly name: string;
  readonly description?: string | null;
  readonly created_at: number;
}

interface WalkFile {
  /**
   * The mark: newer tokens are asked for from here, `>=`, so that tokens created in the mark's own
   * second are read again rather than missed. First the walk's newest created_at, then moved forward
   * by each complete newest-first read; never by this run's writes, whose creation times would hide
   * tokens others created before them.
   */
  readonly since: number;
  /** The newest created_at of the walk itself: every token this run created is at or after it. */
  readonly walked: number;
  readonly tokens: readonly Walked[];
}

/** What a create half reads before it decides: the tokens, and the created_at up to which they are complete. */
export interface LatestTokens {
  readonly tokens: TokenView[];
  readonly since: number;
}

/** A decision and the one token it wrote, if any, which the run's walk then records. */
export interface Decided<T> {
  readonly result: T;
  readonly wrote?: TokenView;
}

const walked = (t: TokenView): Walked => ({ id: t.id, name: t.name, description: t.description, created_at: t.created_at });
const asView = (t: Walked): TokenView => ({ ...t, token: "" });
const newestOf = (tokens: readonly { created_at: number }[]): number => tokens.reduce((m, t) => Math.max(m, t.created_at), 0);

/** A newest-first read from `from`, with the ids that prove its order: the walk's tokens at or after it. */
const markOf = (walk: WalkFile, from: number): TokensSinceMark => ({
  createdAt: from,
  ids: walk.tokens.filter((t) => t.created_at >= from).map((t) => t.id),
});

/** The walk's tokens with `read` laid over them (a listed token carries its value). */
function overlay(walk: WalkFile, read: readonly TokenView[]): TokenView[] {
  const byId = new Map<string, TokenView>(walk.tokens.map((t) => [t.id, asView(t)]));
  for (const t of read) byId.set(t.id, t);
  return [...byId.values()];
}

/** `tokens` with `wrote` in place of its earlier entry. */
const withWrite = (tokens: readonly Walked[], wrote: TokenView | undefined): Walked[] =>
  wrote === undefined ? [...tokens] : [...tokens.filter((t) => t.id !== wrote.id), walked(wrote)];

function readWalk(file: string): WalkFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as WalkFile;
    return typeof parsed.since === "number" && typeof parsed.walked === "number" && Array.isArray(parsed.tokens) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The run's walk file for `account`; throws when the run's folder cannot be used. */
function walkPath(ctx: RuntimeContext, ticket: RunTicket, account: AccountRef): string {
  return runFilePath(openRunFolder(ctx.env, ticket, leaseMs(ctx.env)), account, "walk");
}

function withWalkLock<T>(ctx: RuntimeContext, file: string, fn: () => Promise<T>): Promise<T> {
  return withFileLock(
    `${file}.lock`,
    {
      cwd: ctx.cwd,
      waitMs: lockWaitMs(ctx.env),
      leaseMs: leaseMs(ctx.env),
      onWait: ctx.out.info,
      holder: "listing the API tokens for this terraform run",
    },
    fn,
  );
}

/** An error of the folder (a lock, a file), as opposed to the API's or a decision's. */
const isFolderError = (err: unknown): boolean => !(err instanceof GpuCloudError);

/**
 * Runs `decide` (which writes at most one token) on the account's tokens as they are right now: the
 * read that shows a name free is the last thing before the write, with no lock wait or file write
 * between. Then records the write (and what the read found) in the run's walk. The tokens are the
 * run's walk plus a newest-first read; a walk of the whole account for the first script of the run
 * (which keeps the walk's lock until it has written, so the others wait for a walk that holds its
 * write), outside a run, where the run's folder cannot be used, or where the server does not prove
 * that it lists newest first.
 */
export async function withLatestTokens<T>(
  ctx: RuntimeContext,
  client: ApiClient,
  account: AccountRef,
  decide: (latest: LatestTokens) => Promise<Decided<T>>,
): Promise<T> {
  let deciding = false;
  const walkAndDecide = async () => {
    const tokens = await walkAllTokens(client, ctx);
    deciding = true;
    return { tokens, decided: await decide({ tokens, since: newestOf(tokens) }) };
  };
  const ticket = ctx.ticket;
  if (ticket === undefined) return (await walkAndDecide()).decided.result;
  let file: string;
  let walk: WalkFile | undefined;
  let decided: Decided<T> | undefined;
  try {
    file = walkPath(ctx, ticket, account);
    walk = readWalk(file);
    if (walk === undefined) {
      const walkFile = file;
      walk = await withWalkLock(ctx, walkFile, async () => {
        const meanwhile = readWalk(walkFile);
        if (meanwhile) return meanwhile;
        const first = await walkAndDecide();
        decided = first.decided;
        const newest = newestOf(first.tokens);
        const tokens = withWrite(first.tokens.map(walked), decided.wrote);
        try {
          writePrivateFile(walkFile, JSON.stringify({ since: newest, walked: newest, tokens }));
        } catch (err) {
          ctx.out.warn(`could not keep this run's walk of the API tokens (${errorMessage(err)}); the next look is a full one`);
        }
        return undefined;
      });
    }
  } catch (err) {
    // Once `decide` has started, its outcome stands: never a second decision (nor a second write).
    if (deciding || !isFolderError(err)) throw err;
    ctx.out.warn(`could not share this run's walk of the API tokens (${errorMessage(err)}); walking them for this provisioner alone`);
    return (await walkAndDecide()).decided.result;
  }
  if (decided !== undefined) return decided.result;
  if (walk === undefined) throw new Error("unreachable: the walk's lock released without a walk");
  const read = await listNewestSince(client, ctx, markOf(walk, walk.since));
  if (read === undefined) {
    const own = await walkAndDecide();
    await recordInWalk(ctx, file, [], own.decided.wrote);
    return own.decided.result;
  }
  const latest = await decide({ tokens: overlay(walk, read), since: Math.max(walk.since, newestOf(read)) });
  await recordInWalk(ctx, file, read, latest.wrote);
  return latest.result;
}

/**
 * Adds a complete, order-proven newest-first read and this script's write to the run's walk, under
 * its lock, and moves the mark to the read's newest created_at: the read listed every token from the
 * old mark down, so every older one is in the walk now. Where it cannot, the walk is removed, so
 * that the next look is a full one (a rename recorded nowhere would be missed).
 */
async function recordInWalk(ctx: RuntimeContext, file: string, read: readonly TokenView[], wrote: TokenView | undefined): Promise<void> {
  if (read.length === 0 && wrote === undefined) return;
  try {
    await withWalkLock(ctx, file, async () => {
      const walk = readWalk(file);
      if (walk === undefined) return;
      const held = new Set(walk.tokens.map((t) => t.id));
      const tokens = withWrite([...walk.tokens, ...read.filter((t) => !held.has(t.id)).map(walked)], wrote);
      writePrivateFile(file, JSON.stringify({ ...walk, since: Math.max(walk.since, newestOf(read)), tokens }));
    });
  } catch (err) {
    ctx.out.warn(`could not record in this run's walk (${errorMessage(err)}); removing it, so the next look is a full one`);
    rmSync(file, { force: true });
  }
}

/**
 * For the stack's read after the writes: the run's walk plus what appeared since; undefined when no
 * create half of the run took a walk (this never walks: a read that runs at plan time must not leave
 * a walk for the apply). It wants the values of the tokens this run created, which the walk does not
 * keep: it reads from the walk's mark, or from the oldest creation time among this run's tokens that
 * `needed` picks, when that is older.
 */
export async function tokensSinceRunWalk(
  ctx: RuntimeContext,
  client: ApiClient,
  account: AccountRef,
  needed: (tokens: readonly TokenView[]) => readonly TokenView[],
): Promise<TokenView[] | undefined> {
  const ticket = ctx.ticket;
  if (ticket === undefined) return undefined;
  let walk: WalkFile | undefined;
  try {
    walk = readWalk(walkPath(ctx, ticket, account));
  } catch {
    return undefined; // no run folder: no walk of the run to take
  }
  if (walk === undefined) return undefined;
  const created = needed(walk.tokens.map(asView)).filter((t) => t.created_at >= walk.walked);
  const from = Math.min(walk.since, ...created.map((t) => t.created_at));
  const read = await listNewestSince(client, ctx, markOf(walk, from));
  return read === undefined ? undefined : overlay(walk, read);
}
