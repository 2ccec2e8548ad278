/**
 * Public types of the emulator: its options, its test hooks and the wire shapes it serves.
 * Plain interfaces only, so the emulator stays free of runtime dependencies.
 */

/** One flavor (hardware configuration) as the API returns it (spec 2.4). */
export interface Flavor {
  readonly id: string;
  readonly name: string;
  readonly region_name: string;
  readonly region_id: string;
  /** Price per hour (currency not stated by the spec). */
  readonly price: number;
  readonly cpu: number;
  /** Root disk in GB. */
  readonly disk: number;
  /** Ephemeral disk in GB. Documented, but absent from the spec's sample, so optional. */
  readonly ephemeral?: number;
  /** RAM in GB. */
  readonly ram: number;
  /** GPU model; a `-spot` suffix marks a spot instance. */
  readonly gpu: string;
  readonly gpu_count: number;
  /** Documented, but absent from the spec's sample, so optional. */
  readonly stock_available?: boolean;
  /** `<number> Mbps`. */
  readonly bandwidth: string;
  /** Billing cycle, `hourly`. */
  readonly cycle: string;
}

/** One element of the flavor list (spec 2.3). */
export interface FlavorRegionGroup {
  readonly region: string;
  readonly products: readonly Flavor[];
}

/** The JSON envelope of every API response (spec 2.1). */
export interface Envelope<T = unknown> {
  readonly status: boolean;
  readonly message: string;
  readonly data: T;
  /** Only on the list of API tokens. */
  readonly total?: number;
}

/** An account that can log in. */
export interface EmulatorUser {
  readonly username: string;
  /** Plain-text password; clients send its md5 hex. */
  readonly password: string;
  /** Returned by login; defaults to `<username>@example.test`. */
  readonly email?: string;
  /**
   * The `username` the login answers with, as a server may spell it its own way (`acme` for `Acme`,
   * or the e-mail); defaults to the username as sent.
   */
  readonly answersAs?: string;
  /**
   * The account the user belongs to: users of one account see and manage the same API tokens,
   * and never another account's. Users without one share one account.
   */
  readonly account?: string;
}

/** Injected failures. Every field is optional; `{}` means none. */
export interface EmulatorFaults {
  /** Milliseconds added to every response (and before dropping a connection). */
  readonly latencyMs?: number;
  /** 0..1 share of requests answered 500, 502 or 503 with a JSON envelope (status false). */
  readonly serverErrorRate?: number;
  /** 0..1 share of requests answered 502 with an HTML body (a proxy's error page), not JSON. */
  readonly htmlErrorRate?: number;
  /** Every Nth request (counted since the faults were set) is answered 429 with Retry-After. */
  readonly rateLimitEvery?: number;
  /** Value of the Retry-After header of a 429, in seconds (default 1). */
  readonly retryAfterSeconds?: number;
  /** 0..1 share of requests whose socket is destroyed without any response. */
  readonly dropConnectionRate?: number;
  /** The next N successful `POST /api-tokens` create the token, then destroy the socket before the response. */
  readonly loseCreateResponses?: number;
  /** Every Nth request (counted since the faults were set, like rateLimitEvery) is answered `serverErrorStatus` with a JSON envelope. */
  readonly serverErrorEvery?: number;
  /** HTTP status of `serverErrorEvery` (500 to 599, default 502). */
  readonly serverErrorStatus?: number;
  /**
   * Every error (4xx and 5xx envelopes, injected ones included) is sent with HTTP 200 and
   * `status: false`, as the spec allows. HTML pages and dropped connections stay as they are.
   */
  readonly errorsAsHttp200?: boolean;
  /**
   * The next N accepted `POST /api-tokens` are answered 504 (a gateway's timeout) at once, while
   * the token is committed `createCommitDelayMs` later, as a backend that carries on would.
   */
  readonly gatewayTimeoutCreates?: number;
  /** Delay of the commit after a `gatewayTimeoutCreates` 504, in ms (default 3000). */
  readonly createCommitDelayMs?: number;
  /** On the Nth `GET /api-tokens` that reaches the API (counted since set), the oldest token is deleted before answering (once). */
  readonly deleteOnListRequest?: number;
  /** `GET /api-tokens` with `sortField` or `sortOrder` is refused with 400. */
  readonly rejectSortParams?: boolean;
  /** `sortField` and `sortOrder` are ignored: tokens are listed in the order they were stored, oldest first. */
  readonly ignoreSortParams?: boolean;
  /** `limit` is ignored (the default page size applies). */
  readonly ignoreLimit?: boolean;
  /** Overrides the `defaultPageSize` option while these faults are set. */
  readonly defaultPageSize?: number;
  /** Overrides the `maxPageSize` option while these faults are set. */
  readonly maxPageSize?: number;
  /** Seed of the deterministic PRNG behind the rates (default 1). */
  readonly seed?: number;
  /** When set, faults apply only to requests whose path starts with one of these prefixes. */
  readonly paths?: readonly string[];
}

export interface EmulatorOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: a random free port. */
  readonly port?: number;
  /** Default: one user `demo` / `demo-password` / `demo@example.test`. */
  readonly users?: readonly EmulatorUser[];
  /** Default 1800 (spec: 30 minutes). */
  readonly accessTokenTtlSeconds?: number;
  /** Default 7200 (spec: 2 hours). */
  readonly refreshTokenTtlSeconds?: number;
  /** Default: {@link defaultFlavors}. */
  readonly flavors?: readonly FlavorRegionGroup[];
  /** Page size of the token list when no limit is given. Default 10. */
  readonly defaultPageSize?: number;
  /** Larger limits are clamped to this. Default 100. */
  readonly maxPageSize?: number;
  /** Initial faults (default none); see {@link RunningEmulator.setFaults}. */
  readonly faults?: EmulatorFaults;
  /**
   * Milliseconds every API request waits before it is handled, as an API that far away would
   * make it (default 0). Unlike the `latencyMs` fault, `setFaults` leaves it in place.
   */
  readonly latencyMs?: number;
  /** Limits a real service enforces (default none): see {@link EmulatorRateLimit}. */
  readonly rateLimit?: EmulatorRateLimit;
  /** Clock in milliseconds since the epoch (default Date.now); drives timestamps and expiry. */
  readonly now?: () => number;
  /** Receives one line per request: method, path, status, duration. Never headers, bodies or secrets. */
  readonly log?: (line: string) => void;
  /**
   * How create and update store a token's name (default `"as-given"`): `"trimmed"` strips
   * surrounding white space, `"lower-cased"` lower-cases it. Real services may do either; the
   * spec does not say.
   */
  readonly storeNames?: StoreNames;
}

/**
 * Per-user limits, over sliding windows, counted per user of a password login (the login
 * requests themselves included) and per API token. A request over a limit is answered 429 with
 * `Retry-After` (whole seconds until the window has room) and a message naming the limit; it
 * does not count against the window.
 */
export interface EmulatorRateLimit {
  /** Requests per second per user (any route). */
  readonly requestsPerSecond?: number;
  /** Logins (POST /authenticate/login) per minute per user. */
  readonly loginsPerMinute?: number;
}

/** See {@link EmulatorOptions.storeNames}. */
export type StoreNames = "as-given" | "trimmed" | "lower-cased";
export const STORE_NAMES: readonly StoreNames[] = ["as-given", "trimmed", "lower-cased"];

/** An API token as the emulator stores it (plain data, a copy). */
export interface EmulatorTokenRecord {
  /** The account it belongs to, when not the shared one (see EmulatorUser.account). */
  readonly account?: string;
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** The secret value (a JWT-form string). */
  readonly token: string;
  /** Unix seconds. */
  readonly created_at: number;
  /** Unix seconds of the last authenticated use; 0 = never used. */
  readonly last_used: number;
}

export interface EmulatorStats {
  /**
   * TCP connections accepted, those of control requests included: fewer than `requests` when a
   * client keeps its connection alive.
   */
  readonly connections: number;
  /** API requests received (control requests under `/_emulator/` are not counted). */
  readonly requests: number;
  /** Successful logins. */
  readonly logins: number;
  /** Requests answered 429 by the `rateLimit` option (injected 429 faults not included). */
  readonly throttled: number;
  /** Accepted (successful) `POST /api-tokens` and `PUT /api-tokens/{id}`, including those whose response was lost. */
  readonly tokenWrites: number;
  /** Requests per route, keyed `METHOD /template`, e.g. `PUT /api-tokens/{id}`; unknown paths as `METHOD (unknown)`. */
  readonly byRoute: Readonly<Record<string, number>>;
}

/** What `GET /_emulator/state` answers in its envelope's `data`: the same as `tokens()`, `stats()` and the faults set. */
export interface EmulatorState {
  readonly tokens: EmulatorTokenRecord[];
  readonly stats: EmulatorStats;
  readonly faults: EmulatorFaults;
}

export interface AddTokenInput {
  /** The account to add it to (see EmulatorUser.account); default: the shared account. */
  readonly account?: string;
  readonly name: string;
  readonly description?: string;
  /** Creation time in Unix seconds (like `created_at`); default now. */
  readonly createdAt?: number;
}

/** Several tokens at once, all with one creation time (see {@link RunningEmulator.addTokens}). */
export interface AddTokensInput extends AddTokenInput {
  /** How many (1 to 100,000): they are named `<name>-1` … `<name>-<count>`. */
  readonly count: number;
}

export interface RunningEmulator {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:43121`. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and destroys open sockets (keep-alive included). Never hangs; idempotent. */
  close(): Promise<void>;
  /** Replaces the current faults (`{}` clears them) and restarts their counters and PRNG. Throws on invalid values. */
  setFaults(faults: EmulatorFaults): void;
  /** Snapshot of all API tokens, in creation order. */
  tokens(): EmulatorTokenRecord[];
  stats(): EmulatorStats;
  resetStats(): void;
  /** Adds a token as if it had been created earlier. Throws on a name the API would reject. */
  addToken(input: AddTokenInput): EmulatorTokenRecord;
  /**
   * Adds `count` tokens sharing one `createdAt` (default: now, the same second for all), as a
   * migration or a clock of whole seconds leaves an account, in one go.
   */
  addTokens(input: AddTokensInput): EmulatorTokenRecord[];
  /** Deletes a token outside the API (as a web console would); its value stops authenticating. */
  deleteToken(id: string): boolean;
  /** Every access token issued so far is rejected from now on with `access token expired`. */
  expireAccessTokens(): void;
}
