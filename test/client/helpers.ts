/** Small node:http stub servers and fixtures for the client tests. */
import * as http from "node:http";
import type { AddressInfo, Socket } from "node:net";

import { GpuCloudClient, type GpuCloudClientOptions, GpuCloudError } from "../../src/client";
import { ApiClient } from "../../src/client/client";
import type { OpenHttpSender } from "../../src/client/http-sender";
import { openNodeHttpSender } from "../../src/client/node-http-sender";
import { RequestPacer } from "../../src/client/pacer";
import { openUndiciSender } from "../../src/client/undici-sender";

/**
 * Which HTTP the clients of a test file send with: undici (the public GpuCloudClient) unless a
 * file asks for node:http, the script's (./node-http-sender.test.ts runs the client's suites so).
 */
let sender: "undici" | "node-http" = "undici";
export function sendWith(which: "undici" | "node-http"): void {
  sender = which;
}

/** The file's HTTP (see sendWith), for a transport of its own. */
export function fileSender(): OpenHttpSender {
  return sender === "node-http" ? openNodeHttpSender : openUndiciSender;
}

/** A client of the file's HTTP (see sendWith). */
export function newClient(options: GpuCloudClientOptions): GpuCloudClient {
  return sender === "node-http" ? (new ApiClient(options, openNodeHttpSender) as GpuCloudClient) : new GpuCloudClient(options);
}

/**
 * Things to close after each test: a test file calls `closeAfterEach()` once, then `track(x)`.
 */
const cleanups: Array<() => Promise<void>> = [];
export function track<T extends { close(): Promise<void> }>(thing: T): T {
  cleanups.push(() => thing.close());
  return thing;
}
export function closeAfterEach(): void {
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });
}

export interface Harness {
  client: GpuCloudClient;
  /** The client's log lines. */
  logs: string[];
  /** The waits the client asked for (it never really waits). */
  sleeps: number[];
}

/**
 * A client that records its log lines and its sleeps instead of waiting; closed after the test.
 * Its clock is real time plus every sleep it skipped, so deadlines and settle windows pass as
 * if it had waited.
 */
export function recordingClient(options: GpuCloudClientOptions): Harness {
  const logs: string[] = [];
  const sleeps: number[] = [];
  let skipped = 0;
  const client = newClient({
    logger: (line) => logs.push(line),
    now: () => Date.now() + skipped,
    sleep: async (ms) => {
      sleeps.push(ms);
      skipped += ms;
    },
    ...options,
  });
  track(client);
  return { client, logs, sleeps };
}

/** The GpuCloudError a promise rejects with (fails the test if it resolves or throws something else). */
export async function caught(p: Promise<unknown>): Promise<GpuCloudError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(GpuCloudError);
    return e as GpuCloudError;
  }
  throw new Error("expected a rejection");
}

export interface StubRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  readonly json: unknown;
}

export type StubHandler = (req: StubRequest, res: http.ServerResponse, raw: http.IncomingMessage) => void | Promise<void>;

export interface Stub {
  readonly url: string;
  readonly port: number;
  readonly requests: StubRequest[];
  count(method: string, path: string): number;
  close(): Promise<void>;
}

export async function startStub(handler: StubHandler): Promise<Stub> {
  const requests: StubRequest[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((raw, res) => {
    const chunks: Buffer[] = [];
    raw.on("data", (c: Buffer) => chunks.push(c));
    raw.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const url = new URL(raw.url ?? "/", "http://stub");
      let json: unknown;
      try {
        json = body === "" ? undefined : JSON.parse(body);
      } catch {
        json = undefined;
      }
      const req: StubRequest = { method: raw.method ?? "", path: url.pathname, query: url.searchParams, headers: raw.headers, body, json };
      requests.push(req);
      Promise.resolve(handler(req, res, raw)).catch((e) => {
        if (!res.headersSent) {
          res.statusCode = 599;
          res.end(String(e));
        }
      });
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    count: (method, path) => requests.filter((r) => r.method === method && r.path === path).length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function ok(res: http.ServerResponse, data: unknown, extra: Record<string, unknown> = {}): void {
  sendJson(res, 200, { status: true, message: "success", data, ...extra });
}

export function fail(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { status: false, message, data: null }, headers);
}

/** Destroys the connection without any response. */
export function drop(res: http.ServerResponse): void {
  res.socket?.destroy();
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

/** An unsigned JWT-form string with the given claims (seconds). */
export function jwt(claims: Record<string, unknown>): string {
  return `${b64({ alg: "HS256", typ: "JWT" })}.${b64(claims)}.c2lnbmF0dXJl`;
}

export function flavor(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "f-1",
    name: "n1.h100x1",
    region_name: "Norway East",
    region_id: "r-no",
    price: 2.4,
    cpu: 16,
    disk: 100,
    ram: 128,
    gpu: "H100",
    gpu_count: 1,
    bandwidth: "1000 Mbps",
    cycle: "hourly",
    ...overrides,
  };
}

export interface TokenRecord {
  id: string;
  name: string;
  description: string;
  token: string;
  created_at: number;
  last_used: number;
}

/** A recording sleep that resolves at once, and optionally advances a fake clock. */
export function fakeTime(start = 1_700_000_000_000) {
  let now = start;
  const sleeps: number[] = [];
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
    sleeps,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

/** A RequestPacer on a fake clock starting at `start`; `sleeps` lists each wait it asked for (the clock moves by it). */
export function pacerOnFakeClock(start = 0): { pacer: RequestPacer; clock: { now: number }; sleeps: number[] } {
  const clock = { now: start };
  const sleeps: number[] = [];
  const pacer = new RequestPacer(
    () => clock.now,
    async (ms) => {
      sleeps.push(ms);
      clock.now += ms;
    },
  );
  return { pacer, clock, sleeps };
}
