/**
 * What the transport (./transport.ts) needs from an HTTP library: send one request, get its
 * status, headers and body as text, close the connections. Two implementations: undici for the
 * public client (./undici-sender.ts), node:http for the script Terraform runs
 * (./node-http-sender.ts), which starts once per read and pays for every module it loads.
 *
 * Timeouts of a whole exchange are the transport's (an abort signal); a sender only enforces the
 * connect timeout and the response size limit, and reports failures as errors with a `code`
 * (Node's, undici's or the two below), which the transport classifies.
 */

/** The connect timeout passed (the request was never sent). */
export const CONNECT_TIMEOUT_CODE = "GPUCLOUD_CONNECT_TIMEOUT";
/** The response body went past the size limit. */
export const RESPONSE_TOO_LARGE_CODE = "GPUCLOUD_RESPONSE_TOO_LARGE";

export interface HttpSenderSettings {
  /** At most this many connections at once (queued beyond); undefined: no limit. */
  readonly connections?: number;
  readonly connectTimeoutMs: number;
  /** The longest a response may take (the transport's abort signal usually ends it first). */
  readonly requestTimeoutMs: number;
  readonly maxResponseBytes: number;
}

export interface HttpRequest {
  /** Absolute http: or https: URL. */
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Aborts the exchange (the transport's timeout). */
  readonly signal: AbortSignal;
}

export interface HttpResponse {
  readonly status: number;
  /** Names in lower case. */
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

export interface HttpSender {
  send(request: HttpRequest): Promise<HttpResponse>;
  /** Closes the connections once the requests in flight have finished. */
  close(): Promise<void>;
}

export type OpenHttpSender = (settings: HttpSenderSettings) => HttpSender;

/** An Error with a `code`, as Node's own network errors have. */
export function codedError(message: string, code: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}
