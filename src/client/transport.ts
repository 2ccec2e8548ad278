/**
 * One HTTP exchange with the API: request → validated payload, or a classified
 * {@link GpuCloudError}. The bytes travel through an {@link HttpSender}: undici for the public
 * client (./undici-sender.ts), node:http for the script Terraform runs (./node-http-sender.ts).
 *
 * Classification decides everything above it: `retryable` (the same request may succeed
 * later) and `mayHaveBeenProcessed` (the server may have acted on it: reset after sending,
 * 5xx, timeout), which is what makes a create ambiguous. The spec shows no HTTP status codes,
 * so an error may also come as HTTP 200 with `status: false`; its message then decides.
 */
import type { GpuCloudErrorKind } from "./errors";
import { GpuCloudError } from "./errors";
import type { HttpResponse, HttpSender, OpenHttpSender } from "./http-sender";
import { CONNECT_TIMEOUT_CODE, RESPONSE_TOO_LARGE_CODE } from "./http-sender";
import type { PaceOutcome, RequestPacer } from "./pacer";
import { type Redactor, snippet } from "./redact";
import { DEADLINE_CODE, formatSeconds, MIN_ATTEMPT_MS, parseRetryAfterMs } from "./retry";
import type { Decoder } from "./schemas";
import { decodeEnvelope } from "./schemas";

type Method = "GET" | "POST" | "PUT";

/** One request of an operation, with the decoder of its successful response. */
export interface HttpCall<T> {
  /** e.g. `list flavors (GET /flavors)` */
  readonly operation: string;
  readonly method: Method;
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  readonly body?: unknown;
  readonly decode: Decoder<T>;
  /** The login request itself (failures are auth errors). */
  readonly isLogin?: boolean;
}

export interface TransportOptions {
  /** Normalized, without a trailing slash. */
  readonly baseUrl: string;
  readonly connectTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly userAgent: string;
  /** See GpuCloudClientOptions.connections; undefined: no limit. */
  readonly connections?: number;
  readonly redactor: Redactor;
  readonly now: () => number;
  /** The message of an authentication failure (`login as alice failed (HTTP 401)`). */
  readonly authDetail: (call: HttpCall<unknown>, how: string, serverMessage: string | undefined) => string;
  /** Paces the requests after a 429 (see RequestPacer), logins too. */
  readonly pacer?: RequestPacer;
}

const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export class HttpTransport {
  private readonly sender: HttpSender;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly options: TransportOptions,
    openSender: OpenHttpSender,
  ) {
    this.sender = openSender({
      connections: options.connections,
      connectTimeoutMs: options.connectTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      maxResponseBytes: MAX_RESPONSE_BYTES,
    });
  }

  get isClosed(): boolean {
    return this.closing !== undefined;
  }

  /** Closes the connections; a request in flight is let finish. Every call waits for the same close. */
  close(): Promise<void> {
    this.closing ??= this.sender.close();
    return this.closing;
  }

  /** Sends `call` once; the request gets at most the request timeout and what is left before `deadline`. */
  async exchange<T>(call: HttpCall<T>, authHeaders: Record<string, string>, deadline: number): Promise<T> {
    if (this.isClosed) throw new GpuCloudError({ operation: call.operation, kind: "validation", detail: "the client is closed" });
    this.checkTimeLeft(call, deadline);
    const pacer = this.options.pacer;
    if (pacer === undefined) {
      const answer = await this.roundTrip(call, authHeaders, deadline);
      return this.interpret(call, answer.status, answer.headers, answer.text);
    }
    const place = await pacer.slot(deadline - MIN_ATTEMPT_MS);
    try {
      // A wait for a place held by requests in flight may have used up the time.
      this.checkTimeLeft(call, deadline);
    } catch (e) {
      pacer.release(place);
      throw e;
    }
    // Not answered means failed on the way: the place is given back all the same.
    let outcome: PaceOutcome = "failed";
    try {
      const answer = await this.roundTrip(call, authHeaders, deadline);
      outcome = "accepted";
      return this.interpret(call, answer.status, answer.headers, answer.text);
    } catch (e) {
      // A 429, or a status false that says so.
      if (outcome === "accepted" && e instanceof GpuCloudError && e.kind === "rate-limited")
        outcome = call.isLogin ? "refused login" : "refused";
      throw e;
    } finally {
      pacer.answered(place, outcome);
    }
  }

  private checkTimeLeft(call: HttpCall<unknown>, deadline: number): void {
    if (deadline - this.options.now() >= MIN_ATTEMPT_MS) return;
    throw new GpuCloudError({
      operation: call.operation,
      kind: "timeout",
      retryable: false,
      code: DEADLINE_CODE,
      detail: `no time left for ${call.method} ${call.path}`,
    });
  }

  /** The request on the wire and its answer, undecoded. */
  private async roundTrip(call: HttpCall<unknown>, authHeaders: Record<string, string>, deadline: number): Promise<HttpResponse> {
    const budget = Math.min(this.options.requestTimeoutMs, deadline - this.options.now());
    const headers: Record<string, string> = { accept: "application/json", "user-agent": this.options.userAgent, ...authHeaders };
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
    try {
      const sent = this.sender.send({ url: this.url(call), method: call.method, headers, body: payload, signal: controller.signal });
      // The answer's schemas are built a turn of the event loop later, while the request is on
      // its way: on a reused connection it has been written by then; on a new one the build may
      // come before the connect completes, still before the answer. Only a cache: a failure here
      // is left for decode() to meet and report.
      setImmediate(prepareQuietly, call.decode);
      return await sent;
    } catch (e) {
      throw this.transportError(call, e, timedOut, budget);
    } finally {
      clearTimeout(timer);
    }
  }

  private url(call: HttpCall<unknown>): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) params.set(key, String(value));
    }
    const query = params.toString();
    return `${this.options.baseUrl}${call.path}${query === "" ? "" : `?${query}`}`;
  }

  private interpret<T>(call: HttpCall<T>, status: number, headers: Record<string, string | string[] | undefined>, text: string): T {
    const { operation } = call;
    const redactor = this.options.redactor;
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
    if (isJson) harvestSecrets(json, redactor);
    const record =
      isJson && json !== null && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
    const rawMessage = record?.message ?? (typeof record?.error === "string" ? record.error : undefined);
    const serverMessage = typeof rawMessage === "string" && rawMessage.trim() !== "" ? redactor.redact(rawMessage.trim()) : undefined;
    const contentType = String(headers["content-type"] ?? "no content type")
      .split(";")[0]!
      .trim();
    const describeBody = () => (text.trim() === "" ? "an empty body" : `a non-JSON body (${contentType}): "${snippet(text, redactor)}"`);
    const retryAfter = () => parseRetryAfterMs(headers["retry-after"], this.options.now());

    if (status < 200 || status >= 300) {
      const retryAfterMs = status === 429 || status === 503 ? retryAfter() : undefined;
      const said = serverMessage !== undefined ? `: ${serverMessage}` : isJson ? "" : ` with ${describeBody()}`;
      const c = classifyStatus(status, call.isLogin === true);
      let detail = `HTTP ${status} from ${request}${said}`;
      if (c.kind === "auth") {
        detail =
          this.options.authDetail(call, `HTTP ${status}`, serverMessage) +
          (serverMessage === undefined && !isJson ? ` with ${describeBody()}` : "");
      }
      if (status === 404 && !isJson) detail += " (is baseUrl right?)";
      throw new GpuCloudError({
        operation,
        httpStatus: status,
        serverMessage,
        retryAfterMs,
        kind: c.kind,
        retryable: c.retryable,
        mayHaveBeenProcessed: c.ambiguous,
        detail,
      });
    }
    if (!isJson) {
      throw new GpuCloudError({
        operation,
        kind: "protocol",
        httpStatus: status,
        detail: `HTTP ${status} from ${request} with ${describeBody()}`,
      });
    }
    // The common case first: one validation per response. Anything else (status false, a
    // malformed envelope, a malformed payload) takes the path below, which says which it was.
    if (record?.status === true) {
      const decoded = call.decode(json);
      if (decoded.ok) return decoded.value;
    }
    const envelope = decodeEnvelope(json);
    if (!envelope.ok) {
      throw new GpuCloudError({
        operation,
        kind: "protocol",
        httpStatus: status,
        serverMessage,
        detail: `invalid response from ${request}: ${redactor.redact(envelope.issues)}`,
      });
    }
    if (!envelope.value.status) {
      // A refused login is an auth failure, unless the message says the server failed or throttled.
      const said = classifyStatusFalse(serverMessage);
      const c = call.isLogin && !said.retryable ? { kind: "auth" as const, retryable: false, ambiguous: false } : said;
      const what = serverMessage !== undefined ? `: ${serverMessage}` : " (no message)";
      const detail =
        c.kind === "auth" ? this.options.authDetail(call, "status false", serverMessage) : `${request} failed (status false)${what}`;
      throw new GpuCloudError({
        operation,
        kind: c.kind,
        retryable: c.retryable,
        mayHaveBeenProcessed: c.ambiguous,
        retryAfterMs: c.kind === "rate-limited" ? retryAfter() : undefined,
        httpStatus: status,
        serverMessage,
        detail,
      });
    }
    const decoded = call.decode(json);
    if (!decoded.ok) {
      throw new GpuCloudError({
        operation,
        kind: "protocol",
        httpStatus: status,
        serverMessage,
        detail: `invalid response from ${request}: ${redactor.redact(decoded.issues)}`,
      });
    }
    return decoded.value;
  }

  private transportError(call: HttpCall<unknown>, e: unknown, timedOut: boolean, budgetMs: number): GpuCloudError {
    const { operation } = call;
    const request = `${call.method} ${call.path}`;
    const code = errorCode(e);
    const rawMessage = e instanceof Error ? e.message : String(e);
    const message = this.options.redactor.redact(rawMessage);
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
}

interface Classification {
  readonly kind: GpuCloudErrorKind;
  readonly retryable: boolean;
  /** The server may have processed the request. */
  readonly ambiguous: boolean;
  readonly summary?: string;
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

function classifyStatus(status: number, isLogin: boolean): Classification {
  if (status === 401 || status === 403 || (isLogin && status === 400)) return { kind: "auth", retryable: false, ambiguous: false };
  if (status === 404) return { kind: "not-found", retryable: false, ambiguous: false };
  if (status === 408) return { kind: "timeout", retryable: true, ambiguous: true };
  if (status === 429) return { kind: "rate-limited", retryable: true, ambiguous: false };
  if (status >= 500 && status <= 599) return { kind: "server", retryable: status !== 501 && status !== 505, ambiguous: true };
  if (status >= 400 && status <= 499) return { kind: "validation", retryable: false, ambiguous: false };
  return { kind: "protocol", retryable: false, ambiguous: false };
}

/**
 * `status: false` with a 2xx HTTP status. The spec gives no error codes, so the message decides:
 * credentials, throttling, not found, or a server-side failure (internal error, bad gateway,
 * unavailable, timeout: retryable, and the request may have been processed). Anything else is a
 * refused request (validation), which is final.
 */
function classifyStatusFalse(message: string | undefined): Classification {
  const m = message ?? "";
  if (
    /\b(unauthori[sz]ed|unauthenticated|forbidden|token (is )?(expired|invalid)|(expired|invalid) token|not logged in|login required)\b/i.test(
      m,
    )
  ) {
    return { kind: "auth", retryable: false, ambiguous: false };
  }
  if (/\b(rate limit|too many requests)/i.test(m)) return { kind: "rate-limited", retryable: true, ambiguous: false };
  if (/\b(not found|does not exist|no such)\b/i.test(m)) return { kind: "not-found", retryable: false, ambiguous: false };
  if (
    /\b(internal (server )?error|bad gateway|gateway time-?out|service (temporarily )?unavailable|temporarily unavailable|timed? ?out|try again)\b/i.test(
      m,
    )
  ) {
    return { kind: "server", retryable: true, ambiguous: true };
  }
  return { kind: "validation", retryable: false, ambiguous: false };
}

function errorCode(e: unknown): string | undefined {
  if (e === null || typeof e !== "object") return undefined;
  const err = e as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof err.code === "string") return err.code;
  if (Array.isArray(err.errors) && err.errors.length > 0) return errorCode(err.errors[0]);
  if (err.cause !== undefined && err.cause !== e) return errorCode(err.cause);
  return undefined;
}

function classifyNetworkCode(code: string | undefined): Classification {
  switch (code) {
    case "ECONNREFUSED":
      return { kind: "network", retryable: true, ambiguous: false, summary: "connection refused" };
    case "UND_ERR_CONNECT_TIMEOUT":
    case CONNECT_TIMEOUT_CODE:
      return { kind: "timeout", retryable: true, ambiguous: false, summary: "connect timed out" };
    case "EAI_AGAIN":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
    case "ENETDOWN":
    case "EHOSTDOWN":
      return { kind: "network", retryable: true, ambiguous: false, summary: "host unreachable" };
    case "ENOTFOUND":
      // Retried briefly (retry.ts: unreachableMs): a resolver can fail for a moment, e.g. while a CI runner starts.
      return { kind: "network", retryable: true, ambiguous: false, summary: "host not found" };
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
    case RESPONSE_TOO_LARGE_CODE:
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

function prepareQuietly(decoder: Decoder<unknown>): void {
  try {
    decoder.prepare();
  } catch {
    // decode() builds the schemas again and reports what fails.
  }
}
