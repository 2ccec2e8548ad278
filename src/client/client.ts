/**
 * The HTTP client of the GPU cloud API (spec §4, §5, §7).
 *
 * Layers, from the bottom:
 *
 * - `exchange`: one HTTP request → a validated payload, or a classified {@link GpuCloudError}.
 * - `authedExchange`: adds the authentication headers (logging in lazily, one shared login in
 *   flight) and, with password credentials, replaces a rejected or expiring access token by
 *   logging in again, once per operation.
 * - `withRetries`: attempts an operation up to `retry.maxAttempts` times within
 *   `totalTimeoutMs`, with capped exponential backoff and full jitter, honouring `Retry-After`.
 *
 * A create is never blindly retried: after an ambiguous failure the next attempt first lists
 * the tokens and adopts one of that name if the server did create it.
 */
import { Agent, request } from "undici";
import type { z } from "zod";

import { resolveCredentials, jwtTimes } from "./credentials";
import type { Credentials, ResolvedCredentials } from "./credentials";
import { GpuCloudError } from "./errors";
import type { GpuCloudErrorKind } from "./errors";
import { walkTokenPages } from "./pagination";
import type { ListTokensParams } from "./pagination";
import { Redactor, snippet } from "./redact";
import { backoffDelayMs, formatSeconds, parseRetryAfterMs, resolveRetryPolicy } from "./retry";
import type { ResolvedRetryPolicy, RetryPolicy } from "./retry";
import {
  EnvelopeBaseSchema,
  FlavorListResponseSchema,
  LoginResponseSchema,
  TokenListResponseSchema,
  TokenResponseSchema,
  formatIssues,
} from "./schemas";
import type { ApiToken, FlavorRegionGroup, LoginData, TokenList } from "./schemas";

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_TOTAL_TIMEOUT_MS = 120_000;
export const DEFAULT_USER_AGENT = "cdktf-gpucloud-client";
/** Maximum length of a token name (spec §8), in Unicode code points. */
export const MAX_TOKEN_NAME_LENGTH = 50;
/** Access token lifetime per spec §5, assumed when the token's `exp` can't be read. */
export const SPEC_ACCESS_TOKEN_LIFETIME_MS = 30 * 60_000;
/** Log in again when less than this remains of the access token (at most half its lifetime). */
export const ACCESS_TOKEN_RENEW_MARGIN_MS = 60_000;
/** No attempt is started with less time than this left before the deadline. */
const MIN_ATTEMPT_MS = 50;
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export interface GpuCloudClientOptions {
  /** Base URL of the API, http or https, e.g. `https://api.example.com/v1` (a trailing slash is ignored). */
  readonly baseUrl: string;
  readonly credentials: Credentials;
  /** TCP/TLS connect timeout per attempt (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** Time for one request, from sending to the complete response body (default 30 s). */
  readonly requestTimeoutMs?: number;
  /** Deadline of one operation, retries and waits included (default 120 s). */
  readonly totalTimeoutMs?: number;
  readonly retry?: RetryPolicy;
  /** Progress and warnings, one line each; never receives a secret. */
  readonly logger?: (line: string) => void;
  /** `User-Agent` header (default `cdktf-gpucloud-client`). */
  readonly userAgent?: string;
  /** For tests: how to wait between attempts (default: a timer). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** For tests: a number in [0, 1) for the backoff jitter (default Math.random). */
  readonly random?: () => number;
  /** For tests: the clock in epoch ms, used for deadlines, token expiry and `Retry-After` dates (default Date.now). */
  readonly now?: () => number;
}

/** Name and optional description of an API token (create and update bodies). */
export interface TokenInput {
  readonly name: string;
  readonly description?: string;
}

/** The outcome of {@link GpuCloudClient.login}: who is logged in, without the tokens. */
export interface LoginInfo {
  readonly username: string;
  readonly email?: string;
  /** When the client will log in again (epoch ms): a bit before the access token expires. */
  readonly renewAt: number;
}

type Method = "GET" | "POST" | "PUT";

interface HttpCall<T> {
  /** e.g. `list flavors (GET /flavors)` */
  readonly operation: string;
  readonly method: Method;
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  readonly body?: unknown;
  readonly decode: (json: unknown) => { ok: true; value: T } | { ok: false; issues: string };
  /** The login request itself (failures are auth errors). */
  readonly isLogin?: boolean;
  /** Sent with authentication headers. */
  readonly authenticated: boolean;
}

interface Session {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly username: string;
  readonly email?: string;
  readonly renewAt: number;
}

interface OperationState {
  /** The access token was already replaced once during this operation. */
  reauthed: boolean;
}

function decoder<S extends z.ZodType, T>(schema: S, pick: (parsed: z.output<S>) => T): HttpCall<T>["decode"] {
  return (json) => {
    const result = schema.safeParse(json);
    return result.success ? { ok: true, value: pick(result.data) } : { ok: false, issues: formatIssues(result.error.issues) };
  };
}

/** A client of the GPU cloud API. Create one per configuration; `close()` it when done. */
export class GpuCloudClient {
  readonly baseUrl: string;
  private readonly creds: ResolvedCredentials;
  private readonly connectTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly totalTimeoutMs: number;
  private readonly retry: ResolvedRetryPolicy;
  private readonly logger: ((line: string) => void) | undefined;
  private readonly userAgent: string;
  private readonly sleepFn: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly agent: Agent;
  private readonly redactor = new Redactor();
  private session: Session | undefined;
  private loginInFlight: Promise<Session> | undefined;
  private closed = false;

  constructor(options: GpuCloudClientOptions) {
    const op = "configure client";
    const fail = (detail: string): never => {
      throw new GpuCloudError({ operation: op, kind: "validation", detail });
    };
    if (options === null || typeof options !== "object") fail("options are required");
    this.baseUrl = normalizeBaseUrl(options.baseUrl, fail);
    const creds = resolveCredentials(options.credentials);
    if (typeof creds === "string") fail(creds);
    this.creds = creds as ResolvedCredentials;
    for (const secret of this.creds.secrets) this.redactor.add(secret);
    this.connectTimeoutMs = positive(options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, "connectTimeoutMs", fail);
    this.requestTimeoutMs = positive(options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS, "requestTimeoutMs", fail);
    this.totalTimeoutMs = positive(options.totalTimeoutMs, DEFAULT_TOTAL_TIMEOUT_MS, "totalTimeoutMs", fail);
    const retry = resolveRetryPolicy(options.retry);
    if (typeof retry === "string") fail(retry);
    this.retry = retry as ResolvedRetryPolicy;
    this.logger = options.logger;
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    if (/[\r\n]/.test(this.userAgent)) fail("userAgent must be a single line");
    this.sleepFn = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.agent = new Agent({
      connect: { timeout: this.connectTimeoutMs },
      headersTimeout: this.requestTimeoutMs,
      bodyTimeout: this.requestTimeoutMs,
      maxResponseSize: MAX_RESPONSE_BYTES,
    });
  }

  /** Which credential form the client uses. */
  get credentialKind(): "password" | "api-token" {
    return this.creds.kind;
  }

  /** Closes the client's connections. Later calls fail. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.session = undefined;
    await this.agent.close();
  }

  /** Redacts every secret the client knows of from `text` (for callers' own messages). */
  redact(text: string): string {
    return this.redactor.redact(text);
  }

  // -------------------------------------------------------------------------------------------
  // Operations

  /**
   * Makes sure a valid session exists (logging in when there is none or it is about to
   * expire). Resolves to undefined with API-token credentials, which need no login.
   */
  async login(): Promise<LoginInfo | undefined> {
    if (this.creds.kind === "api-token") return undefined;
    const operation = "log in (POST /authenticate/login)";
    const deadline = this.startDeadline(operation);
    const session = await this.withRetries(operation, "POST /authenticate/login", deadline, () => this.ensureSession(deadline));
    return { username: session.username, email: session.email, renewAt: session.renewAt };
  }

  /** GET /flavors, optionally with `region_id` (the server's filter; see selectFlavors for a client-side one). */
  async listFlavors(regionId?: string): Promise<FlavorRegionGroup[]> {
    const operation = "list flavors (GET /flavors)";
    if (regionId !== undefined && (typeof regionId !== "string" || regionId === "")) {
      throw new GpuCloudError({ operation, kind: "validation", detail: "regionId must be a non-empty string" });
    }
    const call: HttpCall<FlavorRegionGroup[]> = {
      operation,
      method: "GET",
      path: "/flavors",
      query: { region_id: regionId },
      authenticated: true,
      decode: decoder(FlavorListResponseSchema, (r) => r.data),
    };
    return this.runIdempotent(call);
  }

  /** GET /api-tokens: one page and the total count. */
  async listTokens(params: ListTokensParams = {}): Promise<TokenList> {
    const operation = "list API tokens (GET /api-tokens)";
    const call = this.listTokensCall(operation, params);
    return this.runIdempotent(call);
  }

  /**
   * POST /api-tokens. Never blindly retried: when an attempt's outcome is ambiguous (the
   * request may have been processed), the next attempt first lists the tokens and adopts the
   * newest one with exactly this name; it posts again only if there is none. Callers create
   * only when no token of that name exists, so one that appears is theirs.
   */
  async createToken(input: TokenInput): Promise<ApiToken> {
    const operation = "create API token (POST /api-tokens)";
    const body = tokenBody(input, operation);
    const call: HttpCall<ApiToken> = {
      operation,
      method: "POST",
      path: "/api-tokens",
      body,
      authenticated: true,
      decode: decoder(TokenResponseSchema, (r) => r.data),
    };
    const deadline = this.startDeadline(operation);
    const state: OperationState = { reauthed: false };
    let unknownOutcome: GpuCloudError | undefined;
    return this.withRetries(
      operation,
      "POST /api-tokens",
      deadline,
      async () => {
        if (unknownOutcome !== undefined) {
          this.log(`checking whether API token "${body.name}" was created despite ${reasonOf(unknownOutcome)}`);
          const found = await this.findNewestTokenNamed(body.name, deadline, state);
          if (found !== undefined) {
            this.log(`adopted API token "${found.name}" (id ${found.id}): created by an earlier attempt whose response was lost`);
            return found;
          }
          this.log(`no API token named "${body.name}" exists; creating it again`);
          unknownOutcome = undefined;
        }
        try {
          return await this.authedExchange(call, deadline, state);
        } catch (e) {
          if (e instanceof GpuCloudError && e.operation === operation && e.mayHaveBeenProcessed) unknownOutcome = e;
          throw e;
        }
      },
      (err) =>
        unknownOutcome === undefined
          ? err
          : err.with({
              outcomeUnknown: true,
              detail: `${err.detail}; the token "${body.name}" may have been created: list the tokens before creating it again`,
            }),
    );
  }

  /** PUT /api-tokens/{id} (idempotent, so retried like a read). */
  async updateToken(id: string, input: TokenInput): Promise<ApiToken> {
    const path = `/api-tokens/${typeof id === "string" ? encodeURIComponent(id) : ""}`;
    const operation = `update API token (PUT ${path})`;
    if (typeof id !== "string" || id === "") {
      throw new GpuCloudError({ operation, kind: "validation", detail: "id must be a non-empty string" });
    }
    const call: HttpCall<ApiToken> = {
      operation,
      method: "PUT",
      path,
      body: tokenBody(input, operation),
      authenticated: true,
      decode: decoder(TokenResponseSchema, (r) => r.data),
    };
    return this.runIdempotent(call);
  }

  // -------------------------------------------------------------------------------------------
  // Retries

  private startDeadline(operation: string): number {
    if (this.closed) {
      throw new GpuCloudError({ operation, kind: "validation", detail: "the client is closed" });
    }
    return this.now() + this.totalTimeoutMs;
  }

  private runIdempotent<T>(call: HttpCall<T>): Promise<T> {
    const deadline = this.startDeadline(call.operation);
    const state: OperationState = { reauthed: false };
    return this.withRetries(call.operation, `${call.method} ${call.path}`, deadline, () =>
      this.authedExchange(call, deadline, state),
    );
  }

  private async withRetries<T>(
    operation: string,
    requestLabel: string,
    deadline: number,
    attemptFn: (attempt: number) => Promise<T>,
    finalize: (err: GpuCloudError) => GpuCloudError = (err) => err,
  ): Promise<T> {
    const started = this.now();
    const max = this.retry.maxAttempts;
    for (let attempt = 1; ; attempt++) {
      let err: GpuCloudError;
      try {
        return await attemptFn(attempt);
      } catch (e) {
        if (!(e instanceof GpuCloudError)) throw e;
        err = e;
      }
      const elapsed = this.now() - started;
      const own = err.operation === operation;
      const lastError = own ? err.detail : err.message;
      if (!err.retryable) {
        throw finalize(attempt > 1 ? err.with({ attempts: attempt }) : err);
      }
      if (attempt >= max) {
        const detail = `${lastError} (gave up after ${attempt} attempts in ${formatSeconds(elapsed)})`;
        throw finalize(err.with({ operation, detail, attempts: attempt }));
      }
      const delay = err.retryAfterMs ?? backoffDelayMs(attempt, this.retry, this.random);
      const remaining = deadline - this.now();
      if (delay + MIN_ATTEMPT_MS > remaining) {
        const asked = err.retryAfterMs !== undefined ? `; the server asked to wait ${formatSeconds(err.retryAfterMs)}` : "";
        throw finalize(
          err.with({
            operation,
            kind: "timeout",
            detail:
              `gave up after ${formatSeconds(elapsed)} and ${attempt} attempt${attempt === 1 ? "" : "s"}: ` +
              `the time budget of ${formatSeconds(this.totalTimeoutMs)} leaves no room for another attempt${asked}; last error: ${lastError}`,
            attempts: attempt,
          }),
        );
      }
      const from = own ? "" : ` from ${err.operation}`;
      this.log(`retrying ${requestLabel} after ${reasonOf(err)}${from} (attempt ${attempt + 1}/${max}, waiting ${formatSeconds(delay)})`);
      await this.sleepFn(delay);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Authentication

  private async authedExchange<T>(call: HttpCall<T>, deadline: number, state: OperationState): Promise<T> {
    const first = await this.authHeaders(deadline);
    try {
      return await this.exchange(call, first.headers, deadline);
    } catch (e) {
      if (!(e instanceof GpuCloudError) || e.kind !== "auth" || first.session === undefined) throw e;
      if (state.reauthed) throw e.with({ detail: `${e.detail} (even after logging in again)` });
      state.reauthed = true;
      this.log(`access token rejected by ${call.method} ${call.path} (${e.httpStatus !== undefined ? `HTTP ${e.httpStatus}` : "status false"}); logging in again`);
      if (this.session === first.session) this.session = undefined;
    }
    const second = await this.authHeaders(deadline);
    try {
      return await this.exchange(call, second.headers, deadline);
    } catch (e) {
      if (e instanceof GpuCloudError && e.kind === "auth") throw e.with({ detail: `${e.detail} (even after logging in again)` });
      throw e;
    }
  }

  private async authHeaders(deadline: number): Promise<{ headers: Record<string, string>; session?: Session }> {
    if (this.creds.kind === "api-token") {
      return { headers: { authorization: `Bearer ${this.creds.apiToken}` } };
    }
    const session = await this.ensureSession(deadline);
    return {
      headers: { authorization: `Bearer ${session.accessToken}`, "refresh-token": session.refreshToken },
      session,
    };
  }

  /** The current session, or a new one (one login in flight, shared by all callers). */
  private ensureSession(deadline: number): Promise<Session> {
    const current = this.session;
    if (current !== undefined && this.now() < current.renewAt) return Promise.resolve(current);
    if (this.loginInFlight === undefined) {
      if (current !== undefined) {
        this.session = undefined;
        this.log(`access token of ${current.username} is about to expire; logging in again`);
      }
      this.loginInFlight = this.performLogin(deadline).finally(() => {
        this.loginInFlight = undefined;
      });
    }
    return this.loginInFlight;
  }

  private async performLogin(deadline: number): Promise<Session> {
    if (this.creds.kind !== "password") throw new Error("unreachable: login without password credentials");
    const username = this.creds.username;
    const call: HttpCall<LoginData> = {
      operation: "log in (POST /authenticate/login)",
      method: "POST",
      path: "/authenticate/login",
      body: { username, password: this.creds.passwordMd5 },
      authenticated: false,
      isLogin: true,
      decode: decoder(LoginResponseSchema, (r) => r.data),
    };
    const data = await this.exchange(call, {}, deadline);
    this.redactor.add(data.access_token);
    this.redactor.add(data.refresh_token);
    const session: Session = {
      accessToken: data.access_token,
      refreshToken: data.refresh_token,
      username: data.username || username,
      email: data.email,
      renewAt: renewTime(data.access_token, this.now()),
    };
    if (!this.closed) this.session = session;
    this.log(`logged in as ${session.username}`);
    return session;
  }

  // -------------------------------------------------------------------------------------------
  // Token lookups

  private listTokensCall(operation: string, params: ListTokensParams): HttpCall<TokenList> {
    const fail = (detail: string): never => {
      throw new GpuCloudError({ operation, kind: "validation", detail });
    };
    const { limit, offset, sortField, sortOrder } = params;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) fail("limit must be a positive integer");
    if (offset !== undefined && !(Number.isInteger(offset) && offset >= 0)) fail("offset must be a non-negative integer");
    if (sortField !== undefined && (typeof sortField !== "string" || sortField === "")) fail("sortField must be a non-empty string");
    if (sortOrder !== undefined && sortOrder !== "asc" && sortOrder !== "desc") fail('sortOrder must be "asc" or "desc"');
    return {
      operation,
      method: "GET",
      path: "/api-tokens",
      query: { limit, offset, sortField, sortOrder },
      authenticated: true,
      decode: decoder(TokenListResponseSchema, (r) => ({ tokens: r.data, total: r.total })),
    };
  }

  /** Lists every token (single-shot pages within the caller's attempt) and returns the newest named `name`. */
  private async findNewestTokenNamed(name: string, deadline: number, state: OperationState): Promise<ApiToken | undefined> {
    const operation = "list API tokens (GET /api-tokens)";
    const tokens = await walkTokenPages((params) => this.authedExchange(this.listTokensCall(operation, params), deadline, state), {});
    let newest: ApiToken | undefined;
    for (const token of tokens) {
      if (token.name === name && (newest === undefined || token.created_at >= newest.created_at)) newest = token;
    }
    return newest;
  }

  // -------------------------------------------------------------------------------------------
  // One HTTP exchange

  private async exchange<T>(call: HttpCall<T>, authHeaders: Record<string, string>, deadline: number): Promise<T> {
    const { operation } = call;
    if (this.closed) throw new GpuCloudError({ operation, kind: "validation", detail: "the client is closed" });
    const remaining = deadline - this.now();
    if (remaining < MIN_ATTEMPT_MS) {
      throw new GpuCloudError({ operation, kind: "timeout", retryable: true, detail: "no time left for the request" });
    }
    const budget = Math.min(this.requestTimeoutMs, remaining);
    const headers: Record<string, string> = {
      accept: "application/json",
      "user-agent": this.userAgent,
      ...authHeaders,
    };
    let payload: string | undefined;
    if (call.body !== undefined) {
      payload = JSON.stringify(call.body);
      headers["content-type"] = "application/json";
    }
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, budget);
    let status: number;
    let responseHeaders: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      const response = await request(this.url(call), {
        dispatcher: this.agent,
        method: call.method,
        headers,
        body: payload,
        signal: controller.signal,
      });
      status = response.statusCode;
      responseHeaders = response.headers;
      text = await response.body.text();
    } catch (e) {
      throw this.transportError(call, e, timedOut, budget);
    } finally {
      clearTimeout(timer);
    }
    return this.interpret(call, status, responseHeaders, text);
  }

  private url(call: HttpCall<unknown>): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) params.set(key, String(value));
    }
    const query = params.toString();
    return `${this.baseUrl}${call.path}${query === "" ? "" : `?${query}`}`;
  }

  private interpret<T>(call: HttpCall<T>, status: number, headers: Record<string, string | string[] | undefined>, text: string): T {
    const { operation } = call;
    const request = `${call.method} ${call.path}`;
    let json: unknown;
    let isJson = false;
    if (text.trim() !== "") {
      try {
        json = JSON.parse(text);
        isJson = true;
      } catch {
        isJson = false;
      }
    }
    if (isJson) harvestSecrets(json, this.redactor);
    const record = isJson && json !== null && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
    const rawMessage = record?.message ?? (typeof record?.error === "string" ? record.error : undefined);
    const serverMessage = typeof rawMessage === "string" && rawMessage.trim() !== "" ? this.redactor.redact(rawMessage.trim()) : undefined;
    const contentType = String(headers["content-type"] ?? "no content type").split(";")[0]!.trim();
    const describeBody = () =>
      text.trim() === "" ? "an empty body" : `a non-JSON body (${contentType}): "${snippet(text, this.redactor)}"`;

    if (status < 200 || status >= 300) {
      const retryAfterMs = status === 429 || status === 503 ? parseRetryAfterMs(headers["retry-after"], this.now()) : undefined;
      const base = { operation, httpStatus: status, serverMessage, retryAfterMs };
      const said = serverMessage !== undefined ? `: ${serverMessage}` : isJson ? "" : ` with ${describeBody()}`;
      const c = classifyStatus(status, call.isLogin === true);
      let detail = `HTTP ${status} from ${request}${said}`;
      if (c.kind === "auth") detail = this.authDetail(call, `HTTP ${status}`, serverMessage) + (serverMessage === undefined && !isJson ? ` with ${describeBody()}` : "");
      if (status === 404 && !isJson) detail += " (is baseUrl right?)";
      throw new GpuCloudError({ ...base, kind: c.kind, retryable: c.retryable, mayHaveBeenProcessed: c.ambiguous, detail });
    }
    if (!isJson) {
      throw new GpuCloudError({ operation, kind: "protocol", httpStatus: status, detail: `HTTP ${status} from ${request} with ${describeBody()}` });
    }
    const envelope = EnvelopeBaseSchema.safeParse(json);
    if (!envelope.success) {
      throw new GpuCloudError({
        operation,
        kind: "protocol",
        httpStatus: status,
        serverMessage,
        detail: `invalid response from ${request}: ${this.redactor.redact(formatIssues(envelope.error.issues))}`,
      });
    }
    if (!envelope.data.status) {
      const kind = call.isLogin ? "auth" : classifyStatusFalse(serverMessage);
      const said = serverMessage !== undefined ? `: ${serverMessage}` : " (no message)";
      const detail = kind === "auth" ? this.authDetail(call, "status false", serverMessage) : `${request} failed (status false)${said}`;
      throw new GpuCloudError({ operation, kind, retryable: kind === "rate-limited", httpStatus: status, serverMessage, detail });
    }
    const decoded = call.decode(json);
    if (!decoded.ok) {
      throw new GpuCloudError({
        operation,
        kind: "protocol",
        httpStatus: status,
        serverMessage,
        detail: `invalid response from ${request}: ${this.redactor.redact(decoded.issues)}`,
      });
    }
    return decoded.value;
  }

  private authDetail(call: HttpCall<unknown>, how: string, serverMessage: string | undefined): string {
    const said = serverMessage !== undefined ? `: ${serverMessage}` : "";
    if (call.isLogin) {
      const who = this.creds.kind === "password" ? ` as ${this.creds.username}` : "";
      return `login${who} failed (${how})${said}`;
    }
    if (this.creds.kind === "api-token") return `the API token was rejected (${how})${said}`;
    return `the access token was rejected (${how})${said}`;
  }

  private transportError(call: HttpCall<unknown>, e: unknown, timedOut: boolean, budgetMs: number): GpuCloudError {
    const { operation } = call;
    const request = `${call.method} ${call.path}`;
    const code = errorCode(e);
    const rawMessage = e instanceof Error ? e.message : String(e);
    const message = this.redactor.redact(rawMessage);
    if (timedOut) {
      return new GpuCloudError({
        operation,
        kind: "timeout",
        retryable: true,
        mayHaveBeenProcessed: true,
        code: "TIMEOUT",
        detail: `${request} got no complete response within ${formatSeconds(budgetMs)}`,
      });
    }
    const c = classifyNetworkCode(code);
    const what = c.summary ?? `network error`;
    return new GpuCloudError({
      operation,
      kind: c.kind,
      retryable: c.retryable,
      mayHaveBeenProcessed: c.ambiguous,
      code,
      detail: `${request}: ${what} (${code ?? "no error code"}${message && message !== code ? `: ${message}` : ""})`,
    });
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

// ---------------------------------------------------------------------------------------------
// Helpers

function normalizeBaseUrl(value: unknown, fail: (detail: string) => never): string {
  if (typeof value !== "string" || value.trim() === "") return fail("baseUrl is required");
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return fail(`baseUrl is not a valid URL: ${JSON.stringify(value.slice(0, 200))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return fail(`baseUrl must be http or https, got ${url.protocol}`);
  if (url.username !== "" || url.password !== "") return fail("baseUrl must not contain credentials (user:password@)");
  if (url.search !== "" || url.hash !== "") return fail("baseUrl must not have a query or fragment");
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

function positive(value: number | undefined, fallback: number, name: string, fail: (detail: string) => never): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) return fail(`${name} must be a positive number of milliseconds`);
  return value;
}

function tokenBody(input: TokenInput, operation: string): { name: string; description?: string } {
  const fail = (detail: string): never => {
    throw new GpuCloudError({ operation, kind: "validation", detail });
  };
  if (input === null || typeof input !== "object") return fail("a token needs a name");
  const { name, description } = input;
  if (typeof name !== "string") return fail("name must be a string");
  const length = [...name].length;
  if (length < 1 || length > MAX_TOKEN_NAME_LENGTH) {
    fail(`name must be 1 to ${MAX_TOKEN_NAME_LENGTH} characters (Unicode code points), got ${length}`);
  }
  if (description !== undefined && typeof description !== "string") fail("description must be a string");
  return description === undefined ? { name } : { name, description };
}

/** When to log in again: `ACCESS_TOKEN_RENEW_MARGIN_MS` (at most half the lifetime) before the access token expires. */
function renewTime(accessToken: string, now: number): number {
  const { expMs, iatMs } = jwtTimes(accessToken);
  // Prefer exp - iat (immune to clock skew between client and server), then exp - now.
  let lifetime = expMs !== undefined ? expMs - (iatMs ?? now) : SPEC_ACCESS_TOKEN_LIFETIME_MS;
  if (!(lifetime > 0)) lifetime = SPEC_ACCESS_TOKEN_LIFETIME_MS;
  return now + lifetime - Math.min(ACCESS_TOKEN_RENEW_MARGIN_MS, lifetime / 2);
}

/** Adds every string under a key ending in `token` (token, access_token, refresh_token) to the redactor. */
function harvestSecrets(value: unknown, redactor: Redactor, depth = 0): void {
  if (depth > 6 || value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const item of value) harvestSecrets(item, redactor, depth + 1);
    return;
  }
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (typeof item === "string" && /token$/i.test(key)) redactor.add(item);
    else harvestSecrets(item, redactor, depth + 1);
  }
}

function classifyStatus(status: number, isLogin: boolean): { kind: GpuCloudErrorKind; retryable: boolean; ambiguous: boolean } {
  if (status === 401 || status === 403 || (isLogin && status === 400)) return { kind: "auth", retryable: false, ambiguous: false };
  if (status === 404) return { kind: "not-found", retryable: false, ambiguous: false };
  if (status === 408) return { kind: "timeout", retryable: true, ambiguous: true };
  if (status === 429) return { kind: "rate-limited", retryable: true, ambiguous: false };
  if (status >= 500 && status <= 599) return { kind: "server", retryable: status !== 501 && status !== 505, ambiguous: true };
  if (status >= 400 && status <= 499) return { kind: "validation", retryable: false, ambiguous: false };
  return { kind: "protocol", retryable: false, ambiguous: false };
}

/**
 * `status: false` with a 2xx HTTP status. The spec gives no error codes, so the message decides
 * between a few kinds; anything else is a refused request (validation).
 */
function classifyStatusFalse(message: string | undefined): GpuCloudErrorKind {
  const m = message ?? "";
  if (/\b(unauthori[sz]ed|unauthenticated|forbidden|token (is )?(expired|invalid)|(expired|invalid) token|not logged in|login required)\b/i.test(m)) return "auth";
  if (/\b(rate limit|too many requests)/i.test(m)) return "rate-limited";
  if (/\b(not found|does not exist|no such)\b/i.test(m)) return "not-found";
  return "validation";
}

function errorCode(e: unknown): string | undefined {
  if (e === null || typeof e !== "object") return undefined;
  const err = e as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof err.code === "string") return err.code;
  if (Array.isArray(err.errors) && err.errors.length > 0) return errorCode(err.errors[0]);
  if (err.cause !== undefined && err.cause !== e) return errorCode(err.cause);
  return undefined;
}

function classifyNetworkCode(code: string | undefined): {
  kind: GpuCloudErrorKind;
  retryable: boolean;
  ambiguous: boolean;
  summary?: string;
} {
  switch (code) {
    case "ECONNREFUSED":
      return { kind: "network", retryable: true, ambiguous: false, summary: "connection refused" };
    case "UND_ERR_CONNECT_TIMEOUT":
      return { kind: "timeout", retryable: true, ambiguous: false, summary: "connect timed out" };
    case "EAI_AGAIN":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
    case "ENETDOWN":
    case "EHOSTDOWN":
      return { kind: "network", retryable: true, ambiguous: false, summary: "host unreachable" };
    case "ENOTFOUND":
      return { kind: "network", retryable: false, ambiguous: false, summary: "host not found" };
    case "ECONNRESET":
    case "EPIPE":
    case "ECONNABORTED":
    case "UND_ERR_SOCKET":
      return { kind: "network", retryable: true, ambiguous: true, summary: "connection closed before the response was complete" };
    case "ETIMEDOUT":
    case "UND_ERR_HEADERS_TIMEOUT":
    case "UND_ERR_BODY_TIMEOUT":
      return { kind: "timeout", retryable: true, ambiguous: true, summary: "response timed out" };
    case "UND_ERR_RES_EXCEEDED_MAX_SIZE":
      return { kind: "protocol", retryable: false, ambiguous: true, summary: "response too large" };
    case "UND_ERR_CLOSED":
    case "UND_ERR_DESTROYED":
      return { kind: "network", retryable: false, ambiguous: false, summary: "the client is closed" };
    case "UND_ERR_INVALID_ARG":
    case "ERR_INVALID_ARG_TYPE":
    case "ERR_INVALID_CHAR":
      return { kind: "validation", retryable: false, ambiguous: false, summary: "invalid request" };
    default:
      if (code !== undefined && /CERT|TLS|SSL/i.test(code)) {
        return { kind: "network", retryable: false, ambiguous: false, summary: "TLS failure" };
      }
      return { kind: "network", retryable: true, ambiguous: true };
  }
}

function reasonOf(err: GpuCloudError): string {
  if (err.httpStatus !== undefined && (err.httpStatus < 200 || err.httpStatus >= 300)) return `HTTP ${err.httpStatus}`;
  if (err.code !== undefined) return err.code === "TIMEOUT" ? "a timeout" : err.code;
  return err.kind;
}
