/**
 * The emulator's HTTP plumbing: errors as HTTP replies, the JSON envelope, request bodies and
 * route matching. It knows nothing of tokens or users.
 */
import type * as http from "node:http";

export const BODY_MAX_BYTES = 1024 * 1024;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export const unauthorized = (message: string): HttpError => new HttpError(401, message, { "www-authenticate": 'Bearer realm="gpucloud"' });

export interface Reply {
  readonly status: number;
  readonly body: string;
  readonly contentType: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A reply, or `drop`: destroy the socket without answering. */
export type Outcome = Reply | "drop";

export const envelope = (status: number, message: string, data: unknown, extra: object = {}, headers?: Record<string, string>): Reply => ({
  status,
  body: JSON.stringify({ status: status < 400, message, data, ...extra }),
  contentType: "application/json; charset=utf-8",
  headers,
});

export const errorReply = (e: HttpError): Reply => envelope(e.status, e.message, null, {}, { ...e.headers });

export interface Route {
  readonly template: string;
  readonly pattern: RegExp;
  readonly methods: readonly string[];
}

export interface RouteMatch {
  readonly route: Route;
  readonly param?: string;
}

export function matchRoute(routes: readonly Route[], path: string): RouteMatch | undefined {
  for (const route of routes) {
    const m = route.pattern.exec(path);
    if (m) return { route, param: m[1] === undefined ? undefined : decodeSegment(m[1]) };
  }
  return undefined;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function parseJsonObject(text: string): Record<string, unknown> {
  if (text.trim() === "") throw new HttpError(400, "request body must be a JSON object (body is empty)");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HttpError(400, "malformed JSON in request body");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new HttpError(400, "request body must be a JSON object");
  }
  return parsed as Record<string, unknown>;
}

export interface Body {
  readonly text: string;
  readonly tooLarge: boolean;
}

export function readBody(req: http.IncomingMessage): Promise<Body> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_MAX_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on("end", () => resolve({ text: tooLarge ? "" : Buffer.concat(chunks).toString("utf8"), tooLarge }));
    req.on("error", reject);
    req.on("close", () => {
      if (!req.complete) reject(new Error("request aborted"));
    });
  });
}
