/**
 * The one error type of the client. Every failure of an operation, local validation included,
 * is a {@link GpuCloudError}: it names the operation, classifies the failure and carries the
 * server's message (redacted: never a credential or a token value).
 */

/** What went wrong, coarse enough for a caller to decide what to do. */
export type GpuCloudErrorKind =
  /** Credentials or tokens were rejected, or a login failed. */
  | "auth"
  /** The request was refused as invalid (client-side check, HTTP 4xx, or `status: false`). */
  | "validation"
  /** The addressed resource does not exist (HTTP 404). */
  | "not-found"
  /** The server throttled the request (HTTP 429). */
  | "rate-limited"
  /** The server failed (HTTP 5xx). */
  | "server"
  /** The connection failed or broke (refused, reset, closed, DNS). */
  | "network"
  /** A request or the whole operation ran out of time. */
  | "timeout"
  /** The server answered something that does not follow the specification. */
  | "protocol";

export const ERROR_KINDS: readonly GpuCloudErrorKind[] = [
  "auth",
  "validation",
  "not-found",
  "rate-limited",
  "server",
  "network",
  "timeout",
  "protocol",
];

export interface GpuCloudErrorInit {
  /** The operation, e.g. `create API token (POST /api-tokens)`. */
  readonly operation: string;
  readonly kind: GpuCloudErrorKind;
  /** What went wrong, without the operation (already redacted). The message is `<operation>: <detail>`. */
  readonly detail: string;
  readonly retryable?: boolean;
  readonly httpStatus?: number;
  readonly serverMessage?: string;
  /** A network error code such as `ECONNRESET` or `UND_ERR_SOCKET`. */
  readonly code?: string;
  /** Delay the server asked for (`Retry-After`), in milliseconds. */
  readonly retryAfterMs?: number;
  /** The request may have reached the server and been processed (reset after sending, 5xx, timeout). */
  readonly mayHaveBeenProcessed?: boolean;
  /** For a create whose outcome could not be established: the resource may exist. */
  readonly outcomeUnknown?: boolean;
  /** Number of attempts made before giving up, when the client retried. */
  readonly attempts?: number;
}

export class GpuCloudError extends Error {
  readonly operation: string;
  /** The message without the leading operation. */
  readonly detail: string;
  readonly kind: GpuCloudErrorKind;
  /** True when the same request may succeed later (network, timeout, 429, most 5xx). */
  readonly retryable: boolean;
  readonly httpStatus?: number;
  /** The `message` of the server's envelope, redacted. */
  readonly serverMessage?: string;
  readonly code?: string;
  readonly retryAfterMs?: number;
  readonly mayHaveBeenProcessed: boolean;
  readonly outcomeUnknown: boolean;
  readonly attempts?: number;

  constructor(init: GpuCloudErrorInit) {
    super(`${init.operation}: ${init.detail}`);
    this.name = "GpuCloudError";
    this.operation = init.operation;
    this.detail = init.detail;
    this.kind = init.kind;
    this.retryable = init.retryable ?? false;
    this.httpStatus = init.httpStatus;
    this.serverMessage = init.serverMessage;
    this.code = init.code;
    this.retryAfterMs = init.retryAfterMs;
    this.mayHaveBeenProcessed = init.mayHaveBeenProcessed ?? false;
    this.outcomeUnknown = init.outcomeUnknown ?? false;
    this.attempts = init.attempts;
  }

  /** A copy with some fields replaced (errors are immutable). */
  with(changes: Partial<GpuCloudErrorInit>): GpuCloudError {
    return new GpuCloudError({
      operation: this.operation,
      kind: this.kind,
      detail: this.detail,
      retryable: this.retryable,
      httpStatus: this.httpStatus,
      serverMessage: this.serverMessage,
      code: this.code,
      retryAfterMs: this.retryAfterMs,
      mayHaveBeenProcessed: this.mayHaveBeenProcessed,
      outcomeUnknown: this.outcomeUnknown,
      attempts: this.attempts,
      ...changes,
    });
  }

  /** Plain data for logs and JSON output (no stack). */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      operation: this.operation,
      kind: this.kind,
      retryable: this.retryable,
      httpStatus: this.httpStatus,
      serverMessage: this.serverMessage,
      code: this.code,
      attempts: this.attempts,
      outcomeUnknown: this.outcomeUnknown || undefined,
    };
  }
}

export function isGpuCloudError(value: unknown): value is GpuCloudError {
  return value instanceof GpuCloudError;
}
