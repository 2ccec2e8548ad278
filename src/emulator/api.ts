/**
 * The emulated API: its routes and their handlers over the emulator's state (the token store,
 * sessions, rate limits, faults and stats), independent of the socket plumbing in server.ts.
 */
import type * as http from "node:http";

import { JwtSigner } from "./crypto";
import { FaultState } from "./faults";
import type { Body, Reply, Route, RouteMatch } from "./http";
import { BODY_MAX_BYTES, envelope, errorReply, HttpError, matchRoute, parseJsonObject } from "./http";
import { RateLimiter } from "./rate-limit";
import { defaultFlavors } from "./seed";
import { Sessions } from "./sessions";
import type { SortField, StoredToken } from "./token-store";
import { SORT_FIELDS, TokenStore, writeView } from "./token-store";
import type { EmulatorOptions, EmulatorStats, EmulatorUser, FlavorRegionGroup, StoreNames } from "./types";
import { STORE_NAMES } from "./types";
import { checkDescription, checkName, checkPositiveInt, intParam } from "./validation";

const DEFAULT_USERS: readonly EmulatorUser[] = [{ username: "demo", password: "demo-password", email: "demo@example.test" }];

const ROUTES: readonly Route[] = [
  { template: "/authenticate/login", pattern: /^\/authenticate\/login$/, methods: ["POST"] },
  { template: "/flavors", pattern: /^\/flavors$/, methods: ["GET"] },
  { template: "/api-tokens", pattern: /^\/api-tokens$/, methods: ["GET", "POST"] },
  { template: "/api-tokens/{id}", pattern: /^\/api-tokens\/([^/]+)$/, methods: ["PUT"] },
];

interface MutableStats {
  connections: number;
  requests: number;
  logins: number;
  throttled: number;
  tokenWrites: number;
  byRoute: Record<string, number>;
}

/** The emulated API: its settings, counters and routes (tokens, sessions and rate limits are their own classes); no sockets. */
export class Emulator {
  private readonly flavors: readonly FlavorRegionGroup[];
  private readonly now: () => number;
  private readonly defaultPageSize: number;
  private readonly maxPageSize: number;
  private readonly signer = new JwtSigner();
  readonly store = new TokenStore(this.signer, () => this.nowSeconds());
  private stat: MutableStats = { connections: 0, requests: 0, logins: 0, throttled: 0, tokenWrites: 0, byRoute: {} };
  private readonly rateLimiter: RateLimiter;
  readonly sessions: Sessions;
  faults: FaultState;
  private readonly storeNames: StoreNames;

  constructor(options: EmulatorOptions) {
    this.storeNames = options.storeNames ?? "as-given";
    if (!STORE_NAMES.includes(this.storeNames)) throw new Error(`emulator option storeNames must be one of ${STORE_NAMES.join(", ")}`);
    const users = new Map((options.users ?? DEFAULT_USERS).map((u) => [u.username, u]));
    this.flavors = structuredClone(options.flavors ?? defaultFlavors()) as FlavorRegionGroup[];
    this.now = options.now ?? Date.now;
    const accessTtl = checkPositiveInt("accessTokenTtlSeconds", options.accessTokenTtlSeconds ?? 1800);
    const refreshTtl = checkPositiveInt("refreshTokenTtlSeconds", options.refreshTokenTtlSeconds ?? 7200);
    this.maxPageSize = checkPositiveInt("maxPageSize", options.maxPageSize ?? 100);
    this.defaultPageSize = Math.min(checkPositiveInt("defaultPageSize", options.defaultPageSize ?? 10), this.maxPageSize);
    this.faults = new FaultState(options.faults ?? {});
    this.rateLimiter = new RateLimiter(options.rateLimit, this.now, () => (this.stat.throttled += 1));
    const nowSeconds = () => this.nowSeconds();
    this.sessions = new Sessions({ signer: this.signer, tokens: this.store, users, accessTtl, refreshTtl, nowSeconds });
  }

  private nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  // ---- test hooks -------------------------------------------------------------------------

  stats(): EmulatorStats {
    return { ...this.stat, byRoute: { ...this.stat.byRoute } };
  }

  resetStats(): void {
    this.stat = { connections: 0, requests: 0, logins: 0, throttled: 0, tokenWrites: 0, byRoute: {} };
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
        this.rateLimiter.request(who);
        this.rateLimiter.login(who);
        const data = this.sessions.login(login);
        this.stat.logins += 1;
        return { reply: envelope(200, "login successful", data) };
      }
      const { account, who } = this.sessions.authenticate(req);
      this.rateLimiter.request(who);
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
    const t = this.store.create(account, name, description, this.nowSeconds());
    this.stat.tokenWrites += 1;
    return { reply: envelope(200, "API token created", writeView(t)), created: t };
  }

  private update(id: string, body: Record<string, unknown>, account: string): Reply {
    const name = this.storedName(checkName(body.name));
    const description = checkDescription(body.description);
    const stored = this.store.update(id, account, name, description);
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
    // A server that ignores the sort lists in its own order: the order of creation, oldest first.
    const { page, total } = this.store.list(account, f.ignoreSortParams ? undefined : { field, sign }, offset, limit);
    return envelope(200, "API tokens retrieved", page, { total });
  }
}
