/**
 * The client of the GPU cloud API (spec §4, §5, §7): a façade over
 *
 * - `transport.ts`: one HTTP exchange, classified errors, over undici (the public
 *   {@link GpuCloudClient}, ./gpu-cloud-client.ts) or node:http (the script Terraform runs);
 * - `retry.ts`: each idempotent request retried on its own until the deadline;
 * - `session.ts`: login, access/refresh tokens, logging in again;
 * - `operations.ts`, `pagination.ts`, `ambiguous-create.ts`: the operations, the walk over
 *   pages, and the create that cannot duplicate.
 *
 * Deadlines: with the `deadline` option every operation of the client ends by that instant
 * (a script run sets one for all its requests, and clients of one run share it); without it,
 * each operation gets `totalTimeoutMs` from its start.
 */
import {
  createWithoutDuplicate,
  DEFAULT_CREATE_SETTLE_WINDOW_AFTER_SERVER_ERROR_MS,
  DEFAULT_CREATE_SETTLE_WINDOW_MS,
} from "./ambiguous-create";
import type { Credentials, ResolvedCredentials } from "./credentials";
import { resolveCredentials } from "./credentials";
import { GpuCloudError } from "./errors";
import type { OpenHttpSender } from "./http-sender";
import type { TokenInput } from "./operations";
import {
  CREATE_TOKEN,
  createTokenCall,
  LIST_TOKENS,
  listFlavorsCall,
  listTokensCall,
  LOGIN_OPERATION,
  MAX_TOKEN_NAME_LENGTH,
  newestNamed,
  updateTokenCall,
} from "./operations";
import { RequestPacer } from "./pacer";
import type { ListAllTokensOptions, ListTokensParams, TokensSinceMark, TokensSinceOptions, WalkEnvironment } from "./pagination";
import { ListingPlan, walkAllTokens } from "./pagination";
import { Redactor } from "./redact";
import type { ResolvedRetryPolicy, RetryEnvironment, RetryPolicy } from "./retry";
import { backoffDelayMs, MAX_TIMER_MS, MIN_ATTEMPT_MS, resolveRetryPolicy, retryUntilDeadline } from "./retry";
import type { ApiToken, FlavorRegionGroup, TokenList } from "./schemas";
import { SessionManager, type SessionStore } from "./session";
import { walkTokensSince } from "./tokens-since";
import type { HttpCall } from "./transport";
import { HttpTransport } from "./transport";

export { DEFAULT_CREATE_SETTLE_WINDOW_AFTER_SERVER_ERROR_MS, DEFAULT_CREATE_SETTLE_WINDOW_MS, MAX_TOKEN_NAME_LENGTH, type TokenInput };

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_TOTAL_TIMEOUT_MS = 120_000;
const DEFAULT_USER_AGENT = "cdktf-gpucloud-client";
/** Items on the newest page read when looking for a token after an ambiguous create. */
const NEWEST_PAGE_SIZE = 10;

export interface GpuCloudClientOptions {
  /** Base URL of the API, http or https, e.g. `https://api.example.com/v1` (a trailing slash is ignored). */
  readonly baseUrl: string;
  /**
   * Where `baseUrl` came from, named with it when the API cannot be reached (e.g.
   * `GPUCLOUD_BASE_URL`); never a secret.
   */
  readonly baseUrlSource?: string;
  /**
   * Added to the message of a request that gives up while the API throttles it (HTTP 429): what
   * the user can change, e.g. a larger time budget or a credential that needs no login.
   */
  readonly rateLimitAdvice?: string;
  readonly credentials: Credentials;
  /** TCP/TLS connect timeout per attempt (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** Time for one request, from sending to the complete response body (default 30 s). */
  readonly requestTimeoutMs?: number;
  /**
   * Budget of one operation, retries and waits included (default 120 s), when no `deadline` is
   * given; with a `deadline`, only the figure quoted in messages.
   */
  readonly totalTimeoutMs?: number;
  /**
   * Absolute deadline (epoch ms, on the `now` clock) of every operation of this client, e.g.
   * the end of a script run's budget. Clients given the same value share the budget.
   */
  readonly deadline?: number;
  /**
   * How long to keep looking for a token after a create answered by a gateway timeout (504), a
   * 408, a timeout or a dropped connection, before posting again (default 20 s; at most half of
   * what is left of the budget).
   */
  readonly createSettleWindowMs?: number;
  /** The same after another 5xx (default 3 s). */
  readonly createSettleWindowAfterServerErrorMs?: number;
  readonly retry?: RetryPolicy;
  /** Progress and warnings, one line each; never receives a secret. */
  readonly logger?: (line: string) => void;
  /**
   * Shares the login session with other clients (other processes, say): with password
   * credentials, a session one of them stored is used instead of logging in, and a login is
   * stored for the others. Unused with an API token.
   */
  readonly sessionStore?: SessionStore;
  /** `User-Agent` header (default `cdktf-gpucloud-client`). */
  readonly userAgent?: string;
  /**
   * At most this many connections to the API at once (default: as many as there are calls in
   * flight). 1 suits a program that awaits one call at a time, like the runtime script: undici
   * otherwise opens a second connection for a request sent in the same tick as the previous
   * answer ended. With 1, concurrent calls wait in line, and their request timeout runs while
   * they wait.
   */
  readonly connections?: number;
  /** For tests: how to wait between attempts (default: a timer). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** For tests: a number in [0, 1) for the backoff jitter (default Math.random). */
  readonly random?: () => number;
  /** For tests: the clock in epoch ms, used for deadlines, token expiry and `Retry-After` dates (default Date.now). */
  readonly now?: () => number;
}

/** The outcome of {@link GpuCloudClient.login}: who is logged in, without the tokens. */
export interface LoginInfo {
  readonly username: string;
  readonly email?: string;
  /** When the client will log in again (epoch ms): a bit before the access token expires. */
  readonly renewAt: number;
}

/**
 * The client, with the HTTP library it sends through given: the public GpuCloudClient
 * (./gpu-cloud-client.ts) is this over undici; the script Terraform runs takes node:http
 * (./node-http-sender.ts), so that its bundle carries no undici. Everything but the sending is
 * here, shared by both.
 */
export class ApiClient {
  readonly baseUrl: string;
  private readonly creds: ResolvedCredentials;
  private readonly totalTimeoutMs: number;
  private fixedDeadline: number | undefined;
  private readonly settleWindowMs: number;
  private readonly settleWindowAfterServerErrorMs: number;
  private readonly retry: ResolvedRetryPolicy;
  private readonly logger: ((line: string) => void) | undefined;
  private readonly sleepFn: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly redactor = new Redactor();
  private readonly transport: HttpTransport;
  private readonly session: SessionManager;
  private readonly listing = new ListingPlan();
  private readonly retryEnv: RetryEnvironment;

  constructor(options: GpuCloudClientOptions, openSender: OpenHttpSender) {
    const fail = (detail: string): never => {
      throw new GpuCloudError({ operation: "configure client", kind: "validation", detail });
    };
    if (options === null || typeof options !== "object") fail("options are required");
    this.baseUrl = normalizeBaseUrl(options.baseUrl, fail);
    const creds = resolveCredentials(options.credentials);
    if (typeof creds === "string") fail(creds);
    this.creds = creds as ResolvedCredentials;
    for (const secret of this.creds.secrets) this.redactor.add(secret);
    const connectTimeoutMs = milliseconds(options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, "connectTimeoutMs", fail);
    const requestTimeoutMs = milliseconds(options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS, "requestTimeoutMs", fail);
    this.totalTimeoutMs = milliseconds(options.totalTimeoutMs, DEFAULT_TOTAL_TIMEOUT_MS, "totalTimeoutMs", fail);
    if (options.deadline !== undefined && (typeof options.deadline !== "number" || !Number.isFinite(options.deadline))) {
      fail("deadline must be a finite number (epoch milliseconds)");
    }
    this.fixedDeadline = options.deadline;
    this.settleWindowMs =
      options.createSettleWindowMs === undefined
        ? DEFAULT_CREATE_SETTLE_WINDOW_MS
        : milliseconds(options.createSettleWindowMs, 0, "createSettleWindowMs", fail, true);
    this.settleWindowAfterServerErrorMs =
      options.createSettleWindowAfterServerErrorMs === undefined
        ? DEFAULT_CREATE_SETTLE_WINDOW_AFTER_SERVER_ERROR_MS
        : milliseconds(options.createSettleWindowAfterServerErrorMs, 0, "createSettleWindowAfterServerErrorMs", fail, true);
    const retry = resolveRetryPolicy(options.retry);
    if (typeof retry === "string") fail(retry);
    this.retry = retry as ResolvedRetryPolicy;
    this.logger = options.logger;
    const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    if (/[\r\n]/.test(userAgent)) fail("userAgent must be a single line");
    this.sleepFn = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, MAX_TIMER_MS))));
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    const log = (line: string) => this.log(line);
    if (options.connections !== undefined && !(Number.isInteger(options.connections) && options.connections >= 1)) {
      fail("connections must be a positive integer");
    }
    this.transport = new HttpTransport(
      {
        baseUrl: this.baseUrl,
        connectTimeoutMs,
        requestTimeoutMs,
        connections: options.connections,
        userAgent,
        redactor: this.redactor,
        now: this.now,
        authDetail: (call, how, said) => this.session.authDetail(call, how, said),
        pacer: new RequestPacer(this.now, this.sleepFn),
      },
      openSender,
    );
    this.session = new SessionManager(this.creds, this.transport, this.redactor, this.now, log, options.sessionStore);
    this.retryEnv = {
      policy: this.retry,
      now: this.now,
      sleep: this.sleepFn,
      random: this.random,
      log,
      budgetMs:
        this.fixedDeadline !== undefined && options.totalTimeoutMs === undefined
          ? Math.max(0, this.fixedDeadline - this.now())
          : this.totalTimeoutMs,
      rateLimitAdvice:
        typeof options.rateLimitAdvice === "string" && options.rateLimitAdvice.trim() !== "" ? options.rateLimitAdvice.trim() : undefined,
      target:
        typeof options.baseUrlSource === "string" && options.baseUrlSource.trim() !== ""
          ? `${this.baseUrl} (${options.baseUrlSource.trim()})`
          : this.baseUrl,
    };
  }

  /** Which credential form the client uses. */
  get credentialKind(): "password" | "api-token" {
    return this.creds.kind;
  }

  /** Closes the client's connections. Later calls fail. */
  async close(): Promise<void> {
    this.session.clear();
    await this.transport.close();
  }

  /** Redacts every secret the client knows of from `text` (for callers' own messages). */
  redact(text: string): string {
    return this.redactor.redact(text);
  }

  /**
   * Makes sure a valid session exists (logging in when there is none or it is about to
   * expire). Resolves to undefined with API-token credentials, which need no login.
   */
  async login(): Promise<LoginInfo | undefined> {
    if (this.creds.kind === "api-token") return undefined;
    const deadline = this.startDeadline(LOGIN_OPERATION);
    const session = await retryUntilDeadline(
      this.retryEnv,
      { operation: LOGIN_OPERATION, label: "POST /authenticate/login", deadline },
      () => this.session.ensure(deadline),
    );
    return { username: session.username, email: session.email, renewAt: session.renewAt };
  }

  /** GET /flavors, optionally with `region_id` (the server's filter; see selectFlavors for a client-side one). */
  async listFlavors(regionId?: string): Promise<FlavorRegionGroup[]> {
    const call = listFlavorsCall(regionId);
    return this.send(call, this.startDeadline(call.operation));
  }

  /** GET /api-tokens: one page and the total count, exactly as asked (no fallback). */
  async listTokens(params: ListTokensParams = {}): Promise<TokenList> {
    const call = listTokensCall(params);
    return this.send(call, this.startDeadline(call.operation));
  }

  /**
   * Every API token (see pagination.ts): pages that overlap by one, a stable total, a new walk
   * when the list changed meanwhile, and fallbacks when the server refuses sort or limit.
   */
  async listAllTokens(options: ListAllTokensOptions = {}): Promise<ApiToken[]> {
    return this.walk(this.startDeadline(LIST_TOKENS), options);
  }

  /**
   * Every token created at or after `mark.createdAt`, newest first, from the front of the list
   * sorted by creation time descending: a few requests instead of a walk (see tokens-since.ts,
   * walkTokensSince). Undefined unless the read proves that the server sorts so.
   */
  async listTokensSince(mark: TokensSinceMark, options: TokensSinceOptions = {}): Promise<ApiToken[] | undefined> {
    return walkTokensSince(this.walkEnvironment(this.startDeadline(LIST_TOKENS)), mark, options);
  }

  /**
   * POST /api-tokens, never duplicated by a retry: after a failure whose outcome is unknown,
   * the client looks for the token over a settle window before posting again (see
   * ambiguous-create.ts). Callers create only when no token of that name exists.
   */
  async createToken(input: TokenInput): Promise<ApiToken> {
    const call = createTokenCall(input);
    const name = (call.body as { name: string }).name;
    const deadline = this.startDeadline(CREATE_TOKEN);
    return createWithoutDuplicate({
      name,
      deadline,
      settleWindowMs: this.settleWindowMs,
      settleWindowAfterServerErrorMs: this.settleWindowAfterServerErrorMs,
      now: this.now,
      sleep: this.sleepFn,
      random: this.random,
      log: (line) => this.log(line),
      post: () => this.send(call, deadline, (err) => !err.mayHaveBeenProcessed),
      find: async (conclusive) => {
        // One request: the newest page, or the first page in the server's own order when it
        // does not sort; conclusive only when it holds the whole list, else a full walk.
        const first = await this.newestOrFirstPage(deadline);
        const hit = newestNamed(first.tokens, name);
        if (hit !== undefined || !conclusive || first.tokens.length >= first.total) return hit;
        return newestNamed(await this.walk(deadline, {}), name);
      },
      probe: async () => {
        try {
          return newestNamed((await this.session.send(listTokensCall({ limit: NEWEST_PAGE_SIZE, offset: 0 }), deadline)).tokens, name);
        } catch (e) {
          if (e instanceof GpuCloudError) return undefined;
          throw e;
        }
      },
    });
  }

  /** PUT /api-tokens/{id} (idempotent, so retried like a read). */
  async updateToken(id: string, input: TokenInput): Promise<ApiToken> {
    const call = updateTokenCall(id, input);
    return this.send(call, this.startDeadline(call.operation));
  }

  // -------------------------------------------------------------------------------------------

  /**
   * Moves the `deadline` option `ms` later: for a caller that learns how much work it has only
   * after its first requests (the token writer, once it has read the list). No-op without one.
   */
  extendDeadline(ms: number): void {
    if (this.fixedDeadline !== undefined && Number.isFinite(ms) && ms > 0) this.fixedDeadline += ms;
  }

  private startDeadline(operation: string): number {
    if (this.transport.isClosed) throw new GpuCloudError({ operation, kind: "validation", detail: "the client is closed" });
    return this.fixedDeadline ?? this.now() + this.totalTimeoutMs;
  }

  /** One request with authentication, retried on its own until `deadline`. */
  private send<T>(call: HttpCall<T>, deadline: number, mayRetry?: (err: GpuCloudError) => boolean): Promise<T> {
    return retryUntilDeadline(this.retryEnv, { operation: call.operation, label: `${call.method} ${call.path}`, deadline, mayRetry }, () =>
      this.session.send(call, deadline),
    );
  }

  private walk(deadline: number, options: ListAllTokensOptions): Promise<ApiToken[]> {
    return walkAllTokens(this.walkEnvironment(deadline), options);
  }

  private walkEnvironment(deadline: number): WalkEnvironment {
    return {
      fetchPage: (params) => this.send(listTokensCall(params), deadline),
      plan: this.listing,
      log: (line) => this.log(line),
      pauseBeforeWalk: async (walk) => {
        const delay = backoffDelayMs(walk - 1, this.retry, this.random);
        if (this.now() + delay + MIN_ATTEMPT_MS > deadline) return false;
        await this.sleepFn(delay);
        return true;
      },
    };
  }

  /**
   * The first page of the token list: the newest tokens while the server sorts by created_at
   * desc, else the first page in its own order. A server that refuses the sort gets the request
   * again without it (ListingPlan.fetch), and one that ignores it has answered with its own
   * first page: either way no further request is needed.
   */
  private async newestOrFirstPage(deadline: number): Promise<TokenList> {
    const sorted = this.listing.ordered;
    const wanted = sorted
      ? ({ limit: NEWEST_PAGE_SIZE, offset: 0, sortField: "created_at", sortOrder: "desc" } as const)
      : { limit: NEWEST_PAGE_SIZE, offset: 0 };
    const page = await this.listing.fetch(
      (params) => this.send(listTokensCall(params), deadline),
      wanted,
      (line) => this.log(line),
    );
    if (sorted) this.listing.noticeOrder(page.tokens, "created_at", "desc", (line) => this.log(line));
    return page;
  }

  private log(line: string): void {
    if (this.logger === undefined) return;
    try {
      this.logger(this.redactor.redact(line));
    } catch {
      // a failing logger must not break an operation
    }
  }
}

function normalizeBaseUrl(value: unknown, fail: (detail: string) => never): string {
  if (typeof value !== "string" || value.trim() === "") return fail("baseUrl is required");
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    // Not quoted when it holds an "@": what precedes it may be a password.
    return fail(`baseUrl is not a valid URL${value.includes("@") ? "" : `: ${JSON.stringify(value.slice(0, 200))}`}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return fail(`baseUrl must be http or https, got ${url.protocol}`);
  if (url.username !== "" || url.password !== "") return fail("baseUrl must not contain credentials (user:password@)");
  if (url.search !== "" || url.hash !== "") return fail("baseUrl must not have a query or fragment");
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

/** A duration option: positive (or >= 0 with `zeroOk`) and within what Node's timers accept. */
function milliseconds(value: number | undefined, fallback: number, name: string, fail: (detail: string) => never, zeroOk = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || (!zeroOk && value === 0) || value > MAX_TIMER_MS) {
    return fail(`${name} must be a ${zeroOk ? "non-negative" : "positive"} number of milliseconds, at most ${MAX_TIMER_MS}`);
  }
  return value;
}
