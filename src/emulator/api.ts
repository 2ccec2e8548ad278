/**
 * The emulator's state and its API routes: tokens, users and their sessions, rate limits, faults
 * and stats, independent of the socket plumbing (server.ts).
 */
import type * as http from "node:http";
import { JwtSigner, md5Hex, randomHex, safeEqual } from "./crypto";
import { FaultState } from "./faults";
import { BODY_MAX_BYTES, envelope, errorReply, HttpError, matchRoute, parseJsonObject, unauthorized } from "./http";
import type { Body, Reply, Route, RouteMatch } from "./http";
import { defaultFlavors } from "./seed";
import { STORE_NAMES } from "./types";
import type {
  AddTokenInput,
  EmulatorOptions,
  EmulatorRateLimit,
  EmulatorStats,
  EmulatorTokenRecord,
  EmulatorUser,
  FlavorRegionGroup,
  StoreNames,
} from "./types";
import { checkDescription, checkName, checkPositiveInt, intParam, requiredString } from "./validation";

const SORT_FIELDS = ["id", "name", "created_at", "last_used"] as const;
type SortField = (typeof SORT_FIELDS)[number];
const DEFAULT_USERS: readonly EmulatorUser[] = [{ username: "demo", password: "demo-password", email: "demo@example.test" }];

const ROUTES: readonly Route[] = [
  { template: "/authenticate/login", pattern: /^\/authenticate\/login$/, methods: ["POST"] },
  { template: "/flavors", pattern: /^\/flavors$/, methods: ["GET"] },
  { template: "/api-tokens", pattern: /^\/api-tokens$/, methods: ["GET", "POST"] },
  { template: "/api-tokens/{id}", pattern: /^\/api-tokens\/([^/]+)$/, methods: ["PUT"] },
];

interface StoredToken {
  /** "" for the shared account. */
  account: string;
  id: string;
  name: string;
  description: string;
  token: string;
  created_at: number;
  last_used: number;
}

interface MutableStats {
  connections: number;
  requests: number;
  logins: number;
  throttled: number;
  tokenWrites: number;
  byRoute: Record<string, number>;
}

/** The emulator's state and request handling, independent of the socket plumbing. */
export class Emulator {
  private readonly users: ReadonlyMap<string, EmulatorUser>;
  private readonly flavors: readonly FlavorRegionGroup[];
  private readonly now: () => number;
  private readonly accessTtl: number;
  private readonly refreshTtl: number;
  private readonly defaultPageSize: number;
  private readonly maxPageSize: number;
  private readonly signer = new JwtSigner();
  private readonly store = new Map<string, StoredToken>();
  /** jti of the access tokens not yet expired by expireAccessTokens(); only this instance signs tokens. */
  private readonly liveAccess = new Set<string>();
  private stat: MutableStats = { connections: 0, requests: 0, logins: 0, throttled: 0, tokenWrites: 0, byRoute: {} };
  private readonly rateLimit: EmulatorRateLimit;
  /** Per user (or API token): when its requests, and its logins, were accepted (ms, ascending). */
  private readonly requestTimes = new Map<string, number[]>();
  private readonly loginTimes = new Map<string, number[]>();
  faults: FaultState;
  private readonly storeNames: StoreNames;

  constructor(options: EmulatorOptions) {
    this.storeNames = options.storeNames ?? "as-given";
    if (!STORE_NAMES.includes(this.storeNames)) throw new Error(`emulator option storeNames must be one of ${STORE_NAMES.join(", ")}`);
    this.users = new Map((options.users ?? DEFAULT_USERS).map((u) => [u.username, u]));
    this.flavors = structuredClone(options.flavors ?? defaultFlavors()) as FlavorRegionGroup[];
    this.now = options.now ?? Date.now;
    this.accessTtl = checkPositiveInt("accessTokenTtlSeconds", options.accessTokenTtlSeconds ?? 1800);
    this.refreshTtl = checkPositiveInt("refreshTokenTtlSeconds", options.refreshTokenTtlSeconds ?? 7200);
    this.maxPageSize = checkPositiveInt("maxPageSize", options.maxPageSize ?? 100);
    this.defaultPageSize = Math.min(checkPositiveInt("defaultPageSize", options.defaultPageSize ?? 10), this.maxPageSize);
    this.faults = new FaultState(options.faults ?? {});
    this.rateLimit = { ...options.rateLimit };
    for (const [name, value] of Object.entries(this.rateLimit)) {
      if (value !== undefined) checkPositiveInt(`rateLimit.${name}`, value as number);
    }
  }

  /**
   * Counts one request of `who` against a sliding window of `windowMs` holding at most `limit`;
   * over the limit, a 429 whose Retry-After is the whole seconds until the window has room.
   */
  private throttle(times: Map<string, number[]>, who: string, limit: number | undefined, windowMs: number, what: string): void {
    if (limit === undefined) return;
    const now = this.now();
    const recent = (times.get(who) ?? []).filter((t) => t > now - windowMs);
    if (recent.length >= limit) {
      times.set(who, recent);
      this.stat.throttled += 1;
      const wait = Math.max(1, Math.ceil((recent[0]! + windowMs - now) / 1000));
      throw new HttpError(429, `rate limit exceeded: at most ${limit} ${what} per user; retry after ${wait} s`, {
        "retry-after": String(wait),
      });
    }
    recent.push(now);
    times.set(who, recent);
  }

  private nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  // ---- test hooks -------------------------------------------------------------------------

  tokens(): EmulatorTokenRecord[] {
    return [...this.store.values()].map(tokenRecord);
  }

  stats(): EmulatorStats {
    return { ...this.stat, byRoute: { ...this.stat.byRoute } };
  }

  resetStats(): void {
    this.stat = { connections: 0, requests: 0, logins: 0, throttled: 0, tokenWrites: 0, byRoute: {} };
  }

  expireAccessTokens(): void {
    this.liveAccess.clear();
  }

  deleteToken(id: string): boolean {
    return this.store.delete(id);
  }

  addToken(input: AddTokenInput): EmulatorTokenRecord {
    try {
      return this.addChecked(input as unknown as Record<string, unknown>);
    } catch (e) {
      if (e instanceof HttpError) throw new Error(`cannot add token: ${e.message}`);
      throw e;
    }
  }

  /** A pre-existing token from untrusted input (`{name, description?, createdAt?}`), validated like the API does. */
  addChecked(input: Record<string, unknown>): EmulatorTokenRecord {
    if (typeof input !== "object" || input === null) throw new HttpError(400, "token input must be an object");
    const name = checkName(input.name);
    const description = checkDescription(input.description) ?? "";
    const createdAt = input.createdAt ?? this.nowSeconds();
    const account = input.account ?? "";
    if (typeof account !== "string") throw new HttpError(400, "account must be a string");
    if (typeof createdAt !== "number" || !Number.isSafeInteger(createdAt) || createdAt < 0) {
      throw new HttpError(400, "createdAt must be an integer >= 0 (Unix seconds)");
    }
    return tokenRecord(this.createToken(account, name, description, createdAt));
  }

  private createToken(account: string, name: string, description: string, createdAt: number): StoredToken {
    let id: string;
    do id = `tok_${randomHex(8)}`;
    while (this.store.has(id));
    const token = this.signer.sign({ typ: "api", tid: id, iat: createdAt, jti: randomHex(16) });
    const stored: StoredToken = { account, id, name, description, token, created_at: createdAt, last_used: 0 };
    this.store.set(id, stored);
    return stored;
  }

  // ---- API ---------------------------------------------------------------------------------

  /** Counts an accepted TCP connection in the stats. */
  countConnection(): void {
    this.stat.connections += 1;
  }

  /** Counts the request in the stats; returns the matched route, if any. */
  count(method: string, path: string): RouteMatch | undefined {
    const match = matchRoute(ROUTES, path);
    const key = `${method} ${match ? match.route.template : "(unknown)"}`;
    this.stat.requests += 1;
    this.stat.byRoute[key] = (this.stat.byRoute[key] ?? 0) + 1;
    return match;
  }

  /** Handles a routed API request (faults already decided). */
  api(
    req: http.IncomingMessage,
    method: string,
    url: URL,
    match: RouteMatch | undefined,
    body: Body,
  ): { reply: Reply; created?: StoredToken } {
    try {
      if (!match) throw new HttpError(404, `no route for ${method} ${url.pathname}`);
      const { route, param } = match;
      if (!route.methods.includes(method)) {
        throw new HttpError(405, `method ${method} not allowed on ${route.template}; allowed: ${route.methods.join(", ")}`, {
          allow: route.methods.join(", "),
        });
      }
      if (body.tooLarge) throw new HttpError(413, `request body exceeds ${BODY_MAX_BYTES} bytes`);
      if (route.template === "/authenticate/login") {
        const login = parseJsonObject(body.text);
        const who = `user ${typeof login.username === "string" ? login.username : ""}`;
        this.throttle(this.requestTimes, who, this.rateLimit.requestsPerSecond, 1000, "requests per second");
        this.throttle(this.loginTimes, who, this.rateLimit.loginsPerMinute, 60_000, "logins per minute");
        return { reply: this.login(login) };
      }
      const { account, who } = this.authenticate(req);
      this.throttle(this.requestTimes, who, this.rateLimit.requestsPerSecond, 1000, "requests per second");
      switch (`${method} ${route.template}`) {
        case "GET /flavors":
          return { reply: this.listFlavors(url.searchParams) };
        case "GET /api-tokens":
          return { reply: this.listTokens(url.searchParams, account) };
        case "POST /api-tokens":
          return this.create(parseJsonObject(body.text), account);
        default: // PUT /api-tokens/{id}, the only route left
          return { reply: this.update(param ?? "", parseJsonObject(body.text), account) };
      }
    } catch (e) {
      if (e instanceof HttpError) return { reply: errorReply(e) };
      throw e;
    }
  }

  private login(body: Record<string, unknown>): Reply {
    const username = requiredString(body, "username");
    const password = requiredString(body, "password");
    const user = this.users.get(username);
    // Compare even for an unknown user, so timing does not reveal which part was wrong.
    const expected = md5Hex(user ? user.password : "\u0000no such user");
    const passwordOk = safeEqual(password.toLowerCase(), expected);
    if (!user || !passwordOk) throw unauthorized("invalid username or password");
    const iat = this.nowSeconds();
    const accessJti = randomHex(16);
    this.liveAccess.add(accessJti);
    const access_token = this.signer.sign({ typ: "access", sub: username, iat, exp: iat + this.accessTtl, jti: accessJti });
    const refresh_token = this.signer.sign({ typ: "refresh", sub: username, iat, exp: iat + this.refreshTtl, jti: randomHex(16) });
    this.stat.logins += 1;
    return envelope(200, "login successful", {
      username,
      email: user.email ?? `${username}@example.test`,
      access_token,
      refresh_token,
    });
  }

  /** Checks the request's credentials; returns the account they act on and whose they are (for rate limits). */
  private authenticate(req: http.IncomingMessage): { account: string; who: string } {
    const header = req.headers.authorization;
    if (!header) throw unauthorized("missing Authorization header (expected Bearer <token>)");
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!m) throw unauthorized("Authorization header must be Bearer <token>");
    const claims = this.signer.verify(m[1]);
    if (!claims) throw unauthorized("invalid bearer token");
    const nowSec = this.nowSeconds();
    if (claims.typ === "api") {
      const stored = typeof claims.tid === "string" ? this.store.get(claims.tid) : undefined;
      if (!stored || !safeEqual(m[1], stored.token)) throw unauthorized("API token is invalid or has been deleted");
      stored.last_used = nowSec;
      return { account: stored.account, who: `API token ${stored.id}` };
    }
    if (claims.typ === "refresh") throw unauthorized("a refresh token cannot be used as the bearer token");
    if (claims.typ !== "access" || typeof claims.sub !== "string" || typeof claims.exp !== "number") {
      throw unauthorized("invalid bearer token");
    }
    if (nowSec >= claims.exp || !this.liveAccess.has(String(claims.jti))) throw unauthorized("access token expired");
    const refreshHeader = req.headers["refresh-token"];
    if (typeof refreshHeader !== "string" || refreshHeader.trim() === "") {
      throw unauthorized("missing refresh-token header (required with an access token)");
    }
    const refresh = this.signer.verify(refreshHeader.trim());
    if (!refresh || refresh.typ !== "refresh" || typeof refresh.exp !== "number") {
      throw unauthorized("invalid refresh-token header");
    }
    if (nowSec >= refresh.exp) throw unauthorized("refresh token expired");
    if (refresh.sub !== claims.sub) throw unauthorized("refresh token does not belong to the access token's user");
    const user = this.users.get(claims.sub);
    if (!user) throw unauthorized("unknown user");
    return { account: user.account ?? "", who: `user ${user.username}` };
  }

  private listFlavors(query: URLSearchParams): Reply {
    const region = query.get("region_id") ?? "";
    const data =
      region === ""
        ? this.flavors
        : this.flavors
            .map((g) => ({ region: g.region, products: g.products.filter((p) => p.region_id === region) }))
            .filter((g) => g.products.length > 0);
    return envelope(200, "flavors retrieved", data);
  }

  /** The spelling create and update store (see EmulatorOptions.storeNames). */
  private storedName(name: string): string {
    if (this.storeNames === "trimmed") return name.trim();
    if (this.storeNames === "lower-cased") return name.toLowerCase();
    return name;
  }

  private create(body: Record<string, unknown>, account: string): { reply: Reply; created: StoredToken } {
    const name = this.storedName(checkName(body.name));
    const description = checkDescription(body.description) ?? "";
    const t = this.createToken(account, name, description, this.nowSeconds());
    this.stat.tokenWrites += 1;
    return { reply: envelope(200, "API token created", writeView(t)), created: t };
  }

  /** Takes a just-created token out of the list until {@link commit} (a backend still working on it). */
  withhold(token: StoredToken): void {
    this.store.delete(token.id);
  }

  /** Makes a withheld token visible, created now. */
  commit(token: StoredToken): void {
    token.created_at = Math.max(token.created_at, this.nowSeconds());
    this.store.set(token.id, token);
  }

  /** Deletes the oldest token (smallest created_at, then id); returns its id. */
  deleteOldest(): string | undefined {
    let oldest: StoredToken | undefined;
    for (const t of this.store.values()) {
      if (!oldest || t.created_at < oldest.created_at || (t.created_at === oldest.created_at && t.id < oldest.id)) oldest = t;
    }
    if (oldest) this.store.delete(oldest.id);
    return oldest?.id;
  }

  private update(id: string, body: Record<string, unknown>, account: string): Reply {
    const name = this.storedName(checkName(body.name));
    const description = checkDescription(body.description);
    const found = this.store.get(id);
    const stored = found?.account === account ? found : undefined;
    if (!stored) throw new HttpError(404, `API token ${JSON.stringify(id.slice(0, 80))} not found`);
    stored.name = name;
    if (description !== undefined) stored.description = description;
    this.stat.tokenWrites += 1;
    return envelope(200, "API token updated", writeView(stored));
  }

  private listTokens(params: URLSearchParams, account: string): Reply {
    const query = new URLSearchParams(params); // faults may drop parameters; the log shows what was sent
    const f = this.faults.config;
    if (f.rejectSortParams && (query.has("sortField") || query.has("sortOrder"))) {
      throw new HttpError(400, "unknown query parameter: sortField and sortOrder are not supported");
    }
    if (f.ignoreSortParams) {
      query.delete("sortField");
      query.delete("sortOrder");
    }
    if (f.ignoreLimit) query.delete("limit");
    const maxPageSize = f.maxPageSize ?? this.maxPageSize;
    const defaultPageSize = Math.min(f.defaultPageSize ?? this.defaultPageSize, maxPageSize);
    const limit = Math.min(intParam(query, "limit", 1) ?? defaultPageSize, maxPageSize);
    const offset = intParam(query, "offset", 0) ?? 0;
    const rawField = query.get("sortField") ?? "created_at";
    if (!(SORT_FIELDS as readonly string[]).includes(rawField)) {
      throw new HttpError(400, `sortField must be one of ${SORT_FIELDS.join(", ")} (got "${rawField.slice(0, 40)}")`);
    }
    const field = rawField as SortField;
    const rawOrder = (query.get("sortOrder") ?? "desc").toLowerCase();
    if (rawOrder !== "asc" && rawOrder !== "desc") throw new HttpError(400, 'sortOrder must be "asc" or "desc"');
    const sign = rawOrder === "asc" ? 1 : -1;
    const cmp = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);
    const all = [...this.store.values()]
      .filter((t) => t.account === account)
      .sort((a, b) => sign * (cmp(a[field], b[field]) || cmp(a.id, b.id)));
    const page = all.slice(offset, offset + limit).map((t) => ({ ...writeView(t), last_used: t.last_used }));
    return envelope(200, "API tokens retrieved", page, { total: all.length });
  }
}

/** A token as the test hooks return it: a copy, its account named only when it is not the shared one. */
function tokenRecord(t: StoredToken): EmulatorTokenRecord {
  const { account, ...rest } = t;
  return account === "" ? { ...rest } : { account, ...rest };
}

/** The token as create and update return it (no last_used). */
const writeView = (t: StoredToken) => ({
  name: t.name,
  id: t.id,
  description: t.description,
  token: t.token,
  created_at: t.created_at,
});
