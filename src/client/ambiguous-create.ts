/**
 * A create that cannot duplicate (POST /api-tokens is not idempotent and the spec shows no
 * idempotency key).
 *
 * 1. POST. A failure that proves the request was not processed (429, connection refused, 401)
 *    is retried as usual.
 * 2. A failure whose outcome is unknown (5xx, timeout, reset after sending) starts a settle
 *    window (at most half of what is left of the budget, so that a conclusive look-up and one
 *    more POST still fit): 20 s after a gateway timeout (504), a 408, a timeout or a dropped
 *    connection, where the backend may still be working; 3 s after another 5xx, an answer from a
 *    server that failed (a full window there would cost 20 s per failed POST under a steady
 *    error rate, for a case that rarely commits late). The token is
 *    looked for at once and then again with backoff (after 1, 2, 4, 8, 8… s, each jittered to
 *    between half and all of that, so the number of look-ups varies), so that a create
 *    a gateway answered 504 for while the backend carried on is found when it commits.
 *    Each look-up is one request (the newest page: `sortField=created_at&sortOrder=desc&limit=10`,
 *    or the first page in the server's own order when it does not sort); the last look-up of the
 *    window is conclusive (a full walk, unless that page already held the whole list). It is
 *    followed by 0 to 2 probes at random: one request each, sent once and never retried, whose
 *    failure is ignored. Every retried request ends on a success, so without them the POST would
 *    always be the request right after a success, and a server (or a balancer with one bad
 *    backend) failing exactly every k-th request would fail every re-POST.
 * 3. Found: adopted. Not found at the end of the window: one more POST, and the same again if
 *    that one is ambiguous too.
 * 4. When the look-ups cannot finish within the budget, the create fails, saying that the token
 *    may exist and that the next apply adopts it by name rather than creating another.
 *
 * The caller creates only when no token of that name exists, so a token of that name that
 * appears is the one this create made (the newest, if several).
 */
import { GpuCloudError } from "./errors";
import { formatSeconds, reasonOf } from "./retry";
import type { ApiToken } from "./schemas";

export const DEFAULT_CREATE_SETTLE_WINDOW_MS = 20_000;
export const DEFAULT_CREATE_SETTLE_WINDOW_AFTER_SERVER_ERROR_MS = 3_000;
const FIRST_RECHECK_MS = 1000;
const MAX_RECHECK_MS = 8000;

export interface CreateEnvironment {
  readonly name: string;
  readonly deadline: number;
  /** After a gateway timeout (504), a 408, a request timeout or a dropped connection: the backend may still be working. */
  readonly settleWindowMs: number;
  /** After another 5xx (500, 502, 503…): the server answered that it failed, so a commit long after is unlikely. */
  readonly settleWindowAfterServerErrorMs: number;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** A number in [0, 1) for the jitter of the re-check schedule. */
  readonly random: () => number;
  readonly log: (line: string) => void;
  /** One POST, retried only while its outcome is known (not processed). */
  readonly post: () => Promise<ApiToken>;
  /** The token of that name, or undefined. `conclusive`: absent means absent (else a cheap look that may miss it). */
  readonly find: (conclusive: boolean) => Promise<ApiToken | undefined>;
  /** One cheap look sent once, never retried; undefined when it fails or misses the token. */
  readonly probe: () => Promise<ApiToken | undefined>;
}

/** Tokens {@link createWithoutDuplicate} found rather than created, so that a caller logs one outcome. */
const adoptedTokens = new WeakSet<ApiToken>();

/** True when this token object came from a look-up after an ambiguous POST (already logged as adopted). */
export function wasAdoptedAfterLostResponse(token: ApiToken): boolean {
  return adoptedTokens.has(token);
}

export async function createWithoutDuplicate(env: CreateEnvironment): Promise<ApiToken> {
  for (;;) {
    let unknown: GpuCloudError;
    try {
      return await env.post();
    } catch (e) {
      if (!(e instanceof GpuCloudError) || !e.mayHaveBeenProcessed) throw e;
      unknown = e;
    }
    env.log(`checking whether API token "${env.name}" was created despite ${reasonOf(unknown)}`);
    const started = env.now();
    const found = await settle(env, unknown);
    if (found !== undefined) {
      env.log(`adopted API token "${found.name}" (id ${found.id}): created by an earlier attempt whose response was lost`);
      adoptedTokens.add(found);
      return found;
    }
    env.log(`no API token named "${env.name}" appeared within ${formatSeconds(env.now() - started)}; creating it again`);
  }
}

/** Looks for the token over the settle window; undefined when it is conclusively absent at the end. */
async function settle(env: CreateEnvironment, unknown: GpuCloudError): Promise<ApiToken | undefined> {
  // At most half of what is left, so that a conclusive look-up and one more POST still fit.
  const now = env.now();
  const windowMs = mayStillCommit(unknown) ? env.settleWindowMs : env.settleWindowAfterServerErrorMs;
  const windowEnd = now + Math.max(0, Math.min(windowMs, (env.deadline - now) / 2));
  let delay = FIRST_RECHECK_MS;
  for (;;) {
    const last = env.now() >= windowEnd;
    let found: ApiToken | undefined;
    try {
      found = await env.find(last);
    } catch (e) {
      if (!(e instanceof GpuCloudError)) throw e;
      throw outcomeUnknown(env.name, unknown, e);
    }
    // 0 to 2 unretried probes between the conclusive look and the next POST (see step 2 above).
    const probes = last && found === undefined ? Math.floor(Math.min(Math.max(env.random(), 0), 0.999) * 3) : 0;
    for (let i = 0; i < probes && found === undefined; i++) found = await env.probe();
    if (found !== undefined || last) return found;
    // Jittered (half to all of the nominal delay), so that the number of look-ups per window
    // varies: with a fixed count, a server failing every k-th request can fail every re-POST.
    const jittered = delay * (0.5 + Math.min(Math.max(env.random(), 0), 1) / 2);
    await env.sleep(Math.max(0, Math.min(jittered, windowEnd - env.now())));
    delay = Math.min(delay * 2, MAX_RECHECK_MS);
  }
}

/**
 * True for the signatures of a request the backend may still be processing: a gateway or
 * request timeout (504, 408, or `status: false` saying so), our own timeout, a connection that
 * dropped after sending. Other 5xx are answers from a server that failed.
 */
function mayStillCommit(err: GpuCloudError): boolean {
  if (err.httpStatus === 504 || err.httpStatus === 408) return true;
  if (err.httpStatus !== undefined && err.httpStatus >= 500) return false;
  if (err.httpStatus !== undefined) return /time-?out|timed out/i.test(err.serverMessage ?? "");
  return true; // no HTTP answer at all: a timeout or a dropped connection
}

function outcomeUnknown(name: string, unknown: GpuCloudError, lookup: GpuCloudError): GpuCloudError {
  return unknown.with({
    kind: lookup.kind === "timeout" ? "timeout" : unknown.kind,
    retryable: false,
    outcomeUnknown: true,
    attempts: undefined,
    detail:
      `${unknown.detail}; whether the token "${name}" was created could not be established ` +
      `(${lookup.operation === unknown.operation ? lookup.detail : lookup.message}). ` +
      `The next apply adopts a token of that name if it exists instead of creating another`,
  });
}
