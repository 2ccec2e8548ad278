/**
 * An in-memory implementation of the GPU cloud API (see the spec), served over HTTP, meant for
 * tests and offline demos. It depends on Node built-ins only.
 *
 * Choices made where the spec says "not shown" (or is silent):
 *
 * - HTTP status codes: 200 for every success (create included); 400 validation error or malformed
 *   JSON; 401 missing/invalid/expired credentials (with `WWW-Authenticate: Bearer`); 404 unknown
 *   route or unknown token id; 405 known path with the wrong method (with an `Allow` header);
 *   413 body over 1 MiB; 429 rate limit (with `Retry-After`); 500/502/503 injected faults only.
 * - Error body: the same envelope, `{"status": false, "message": "<what is wrong, naming the
 *   field or limit>", "data": null}`.
 * - Timestamps (`created_at`, `last_used`, JWT `iat`/`exp`): integer Unix seconds (UTC epoch).
 * - Credential checks run before body validation; body validation before the token-id lookup.
 * - Request bodies are parsed as JSON whatever the Content-Type; they must be JSON objects;
 *   unknown fields are ignored; `null` counts as "not given" for optional fields.
 * - Login: usernames are case-sensitive; the md5 hex of the password is compared
 *   case-insensitively and in constant time; any failure is `401 invalid username or password`
 *   (never says which). A user without a configured e-mail gets `<username>@example.test`.
 * - Access and refresh tokens are HS256 JWTs signed with a per-instance random secret (so tokens
 *   of another instance, or of a restarted one, are invalid): `{typ, sub, iat, exp, jti}`.
 * - Access token + refresh token: both must be valid, unexpired and of the same user; an
 *   expired access token is `401 access token expired`, checked before the refresh-token header;
 *   a missing, invalid or expired refresh-token header is 401 as well.
 * - There is no refresh endpoint (the spec shows none): after expiry, log in again.
 * - API tokens never expire (`{typ: "api", tid, iat, jti}`, no `exp`); they stop working only when
 *   deleted outside the API (test hook or control surface). Each authenticated use sets
 *   `last_used` to now. A `refresh-token` header sent along with an API token is ignored. A
 *   refresh token used as the bearer is rejected.
 * - Users share one account (every user sees and manages the same API tokens) unless they are
 *   given accounts (EmulatorUser.account): then a user sees and manages its account's tokens only;
 *   another account's token id is 404, and an API token works on the account that made it.
 * - API token ids are opaque: `tok_` + 16 hex characters.
 * - Token names: required string, 1 to 50 Unicode code points, not only whitespace, stored as
 *   given (not trimmed; the `storeNames` option makes it trim or lower-case them, as some
 *   services do); duplicates are allowed. Descriptions: optional string of at most 1000
 *   code points, default "". On update an omitted description keeps the old one; the id, value
 *   and `created_at` never change. Create and update return the token without `last_used`.
 * - Token list: `limit` integer >= 1 (default 10, larger values clamped to 100), `offset` integer
 *   >= 0 (beyond the end gives an empty page), `sortField` one of id, name, created_at, last_used
 *   (default created_at), `sortOrder` asc or desc, case-insensitive (default desc); ties are
 *   broken by id in the same direction; names compare by UTF-16 code units (no locale);
 *   `total` counts all tokens; unknown query parameters are ignored.
 * - Flavors: an unknown `region_id` gives an empty array; an empty `region_id` means no filter;
 *   region groups left without products are omitted; prices are plain numbers per hour.
 * - Paths are matched exactly (no trailing-slash variants); `GET`/`DELETE /api-tokens/{id}` are 405.
 * - Rate limits: none unless configured (`rateLimit`: requests per second and logins per minute
 *   per user, sliding windows, 429 with Retry-After) or injected as faults. Maximum token count: none.
 * - Faults (see EmulatorFaults; set at start, by setFaults or POST /_emulator/faults, which
 *   replace them wholesale and restart their counters): latency, a 5xx share or every Nth
 *   request, HTML 502 pages, 429 with Retry-After, dropped connections, lost create responses,
 *   creates answered 504 that commit later, errors sent as HTTP 200 with `status: false`, a
 *   token deleted during a walk, sort parameters refused or ignored (then listed in the order of creation, oldest first), limit
 *   ignored, page sizes.
 *
 * Control surface (NOT part of the API; a test tool without authentication, so keep the
 * emulator on loopback): `GET /_emulator/state`, `POST /_emulator/faults`,
 * `POST /_emulator/tokens`, `DELETE /_emulator/tokens/{id}`, `POST /_emulator/expire-access-tokens`,
 * `POST /_emulator/reset-stats`. Faults and stats never apply to it.
 */
import * as http from "node:http";
import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";

import { Emulator } from "./api";
import { control } from "./control";
import { FaultState } from "./faults";
import type { Outcome, Reply } from "./http";
import { envelope, readBody } from "./http";
import type { EmulatorFaults, EmulatorOptions, RunningEmulator } from "./types";

/** Query parameters whose values may appear in the request log. */
const LOGGED_QUERY = new Set(["limit", "offset", "sortField", "sortOrder", "region_id"]);
const HTML_502 =
  "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n" +
  "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
const SERVER_ERROR_MESSAGES: Record<number, string> = {
  500: "internal server error",
  502: "bad gateway",
  503: "service temporarily unavailable",
  504: "gateway timeout",
};

/** Path plus query for the log; values of parameters not known to be harmless are masked. */
function logTarget(url: URL): string {
  const parts: string[] = [];
  for (const [key, value] of url.searchParams) {
    parts.push(`${encodeURIComponent(key)}=${LOGGED_QUERY.has(key) ? encodeURIComponent(value) : "***"}`);
  }
  return parts.length ? `${url.pathname}?${parts.join("&")}` : url.pathname;
}

/** Starts an emulator on loopback (by default on a random free port). */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const emulator = new Emulator(options);
  const host = options.host ?? "127.0.0.1";
  const latencyMs = options.latencyMs ?? 0;
  if (!(Number.isFinite(latencyMs) && latencyMs >= 0)) throw new Error("emulator option latencyMs must be a number >= 0");
  const log = options.log;
  const sockets = new Set<Socket>();
  const waits = new Map<NodeJS.Timeout, () => void>();
  let closed: Promise<void> | undefined;
  let closing = false;

  const delay = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        waits.delete(timer);
        resolve();
      }, ms);
      waits.set(timer, resolve);
    });

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const started = performance.now();
    const method = (req.method ?? "GET").toUpperCase();
    let url: URL;
    try {
      // Concatenated, not resolved: a path such as `//x` must stay a path, not become a host.
      url = new URL(`http://emulator.invalid${(req.url ?? "/").startsWith("/") ? req.url : "/"}`);
    } catch {
      url = new URL("http://emulator.invalid/");
    }
    const path = url.pathname;
    const isControl = path === "/_emulator" || path.startsWith("/_emulator/");
    const finish = (outcome: Outcome, note = ""): void => {
      const ms = Math.round(performance.now() - started);
      if (outcome === "drop") {
        req.socket.destroy();
        log?.(`${method} ${logTarget(url)} - connection dropped${note} ${ms}ms`);
        return;
      }
      if (!res.destroyed && !res.headersSent) {
        res.writeHead(statusAsSent(outcome), {
          ...outcome.headers,
          "content-type": outcome.contentType,
          "content-length": Buffer.byteLength(outcome.body),
          "cache-control": "no-store",
        });
        res.end(outcome.body);
      }
      log?.(
        `${method} ${logTarget(url)} ${outcome.status}${statusAsSent(outcome) !== outcome.status ? " (sent as 200)" : ""}${note} ${ms}ms`,
      );
    };
    /** With `errorsAsHttp200`, a JSON error envelope goes out as HTTP 200 (`status: false` in the body). */
    const statusAsSent = (reply: Reply): number =>
      reply.status >= 400 && reply.contentType.startsWith("application/json") && !isControl && emulator.faults.config.errorsAsHttp200
        ? 200
        : reply.status;

    const body = await readBody(req);
    if (isControl) {
      finish(control(emulator, method, path, body));
      return;
    }

    const match = emulator.count(method, path);
    if (latencyMs > 0) await delay(latencyMs);
    const faults = emulator.faults;
    const faulted = faults.applies(path);
    if (faulted) {
      if (faults.latencyMs > 0) await delay(faults.latencyMs);
      const action = faults.next();
      switch (action.kind) {
        case "drop":
          return finish("drop");
        case "rate-limit":
          return finish(
            envelope(
              429,
              `rate limit exceeded; retry after ${action.retryAfter} s`,
              null,
              {},
              {
                "retry-after": String(action.retryAfter),
              },
            ),
          );
        case "html":
          return finish({ status: 502, body: HTML_502, contentType: "text/html" });
        case "server-error":
          return finish(envelope(action.status, SERVER_ERROR_MESSAGES[action.status] ?? "server error", null));
        case "none":
          break;
      }
    }
    if (method === "GET" && match?.route.template === "/api-tokens" && faults.takeListDeletion()) {
      const deleted = emulator.store.deleteOldest();
      if (deleted) log?.(`deleted the oldest API token (id ${deleted}) before answering this list request`);
    }
    const { reply, created } = emulator.api(req, method, url, match, body);
    if (created !== undefined && faulted && faults.takeGatewayTimeoutCreate()) {
      // The gateway gives up; the backend commits the token later.
      emulator.store.withhold(created);
      const commitDelay = faults.createCommitDelayMs;
      void delay(commitDelay).then(() => {
        if (!closing) emulator.store.commit(created);
      });
      return finish(envelope(504, SERVER_ERROR_MESSAGES[504]!, null), ` (the token commits in ${commitDelay} ms)`);
    }
    if (created !== undefined && faulted && faults.takeLostCreate()) {
      return finish("drop", " after create (response lost)");
    }
    finish(reply);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      // An aborted request has no one left to answer; anything else is a bug worth a 500.
      if (req.complete && !res.headersSent && !res.destroyed) {
        const reply = envelope(500, "internal emulator error", null);
        res.writeHead(500, { "content-type": reply.contentType }).end(reply.body);
        log?.(`${req.method} 500 internal emulator error: ${e instanceof Error ? e.name : "unknown"}`);
      }
    });
  });
  server.on("connection", (socket) => {
    emulator.countConnection();
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("emulator: unexpected server address");
  const urlHost = address.family === "IPv6" || address.address.includes(":") ? `[${address.address}]` : address.address;

  return {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    close(): Promise<void> {
      closing = true;
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const [timer, wake] of waits) {
          clearTimeout(timer);
          wake();
        }
        waits.clear();
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
    setFaults(faults: EmulatorFaults): void {
      emulator.faults = new FaultState(faults);
    },
    tokens: () => emulator.store.records(),
    stats: () => emulator.stats(),
    resetStats: () => emulator.resetStats(),
    addToken: (input) => emulator.store.add(input),
    addTokens: (input) => emulator.store.addMany(input),
    deleteToken: (id) => emulator.store.delete(id),
    expireAccessTokens: () => emulator.sessions.expireAccessTokens(),
  };
}
