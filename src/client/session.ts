/**
 * Authentication (spec §5): the headers of each request, the login behind them, and a new
 * login when the access token is about to expire or is rejected.
 *
 * - API-token credentials: `Authorization: Bearer <token>`, no login, a rejection is final.
 * - Password credentials: one shared login in flight; the session is renewed a bit before the
 *   JWT's `exp` (the spec shows no refresh endpoint), and a request whose access token is
 *   rejected logs in again and is sent once more (a rejected request was not processed, so
 *   this is safe for a create too).
 */
import type { ResolvedCredentials } from "./credentials";
import { jwtTimes } from "./credentials";
import { GpuCloudError } from "./errors";
import { LOGIN_OPERATION } from "./operations";
import type { Redactor } from "./redact";
import type { LoginData } from "./schemas";
import { decodeLogin } from "./schemas";
import type { HttpCall, HttpTransport } from "./transport";

/** Access token lifetime per spec §5, assumed when the token's `exp` can't be read. */
const SPEC_ACCESS_TOKEN_LIFETIME_MS = 30 * 60_000;
/** Log in again when less than this remains of the access token (at most half its lifetime). */
const ACCESS_TOKEN_RENEW_MARGIN_MS = 60_000;

export interface Session {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly username: string;
  readonly email?: string;
  /** When to log in again (epoch ms of the client's clock). */
  readonly renewAt: number;
}

/**
 * A session shared beyond one client, e.g. by the scripts of one terraform run (see
 * runtime/run/run-session.ts), so that they log in once per account rather than once each.
 */
export interface SessionStore {
  /**
   * The shared session: one another client stored, still before its `renewAt` and other than
   * the access token `rejected`, else the one `login` makes, which the store keeps for the
   * others. Clients that start together do not all log in: `login` runs in one at a time, and
   * the others take what it stored.
   */
  share(
    login: () => Promise<Session>,
    opts: {
      readonly now: () => number;
      readonly deadline: number;
      readonly rejected?: string;
    },
  ): Promise<{ readonly session: Session; readonly reused: boolean }>;
}

export class SessionManager {
  private session: Session | undefined;
  private loginInFlight: Promise<Session> | undefined;
  /** The access token the API last rejected: a shared store must not hand it out again. */
  private rejected: string | undefined;

  constructor(
    private readonly creds: ResolvedCredentials,
    private readonly transport: HttpTransport,
    private readonly redactor: Redactor,
    private readonly now: () => number,
    private readonly log: (line: string) => void,
    private readonly store?: SessionStore,
  ) {}

  /** Forgets the session (on close). */
  clear(): void {
    this.session = undefined;
  }

  /** Sends `call` with authentication; logs in again once if the access token is rejected. */
  async send<T>(call: HttpCall<T>, deadline: number): Promise<T> {
    const first = await this.headersFor(deadline);
    try {
      return await this.transport.exchange(call, first.headers, deadline);
    } catch (e) {
      if (!(e instanceof GpuCloudError) || e.kind !== "auth" || first.session === undefined) throw e;
      this.log(
        `access token rejected by ${call.method} ${call.path} (${e.httpStatus !== undefined && e.httpStatus >= 300 ? `HTTP ${e.httpStatus}` : "status false"}); logging in again`,
      );
      if (this.session === first.session) this.session = undefined;
      this.rejected = first.session.accessToken;
    }
    const second = await this.headersFor(deadline);
    try {
      return await this.transport.exchange(call, second.headers, deadline);
    } catch (e) {
      if (e instanceof GpuCloudError && e.kind === "auth") throw e.with({ detail: `${e.detail} (even after logging in again)` });
      throw e;
    }
  }

  /**
   * The headers for a request about to be sent. A login that fails here fails before the request
   * is sent: whatever the login's own outcome, the request cannot have been processed, so a
   * create is not taken for ambiguous (no settle window, no look-ups) and is retried as usual.
   */
  private async headersFor(deadline: number): Promise<{ headers: Record<string, string>; session?: Session }> {
    try {
      return await this.headers(deadline);
    } catch (e) {
      if (e instanceof GpuCloudError && e.mayHaveBeenProcessed) throw e.with({ mayHaveBeenProcessed: false });
      throw e;
    }
  }

  /** The current session, or a new one (one login in flight, shared by all callers). */
  ensure(deadline: number): Promise<Session> {
    const current = this.session;
    if (current !== undefined && this.now() < current.renewAt) return Promise.resolve(current);
    if (this.loginInFlight === undefined) {
      if (current !== undefined) {
        this.session = undefined;
        this.log(`access token of ${current.username} is about to expire; logging in again`);
      }
      this.loginInFlight = this.sharedOrNewLogin(deadline).finally(() => {
        this.loginInFlight = undefined;
      });
    }
    return this.loginInFlight;
  }

  /** The message of an authentication failure, naming the credential form (never its value). */
  authDetail(call: HttpCall<unknown>, how: string, serverMessage: string | undefined): string {
    const said = serverMessage !== undefined ? `: ${serverMessage}` : "";
    if (call.isLogin) {
      const who = this.creds.kind === "password" ? ` as ${this.creds.username}` : "";
      return `login${who} failed (${how})${said}`;
    }
    if (this.creds.kind === "api-token") return `the API token was rejected (${how})${said}`;
    return `the access token was rejected (${how})${said}`;
  }

  private async headers(deadline: number): Promise<{ headers: Record<string, string>; session?: Session }> {
    if (this.creds.kind === "api-token") return { headers: { authorization: `Bearer ${this.creds.apiToken}` } };
    const session = await this.ensure(deadline);
    return { headers: { authorization: `Bearer ${session.accessToken}`, "refresh-token": session.refreshToken }, session };
  }

  /** With a store, the session it shares (logging in only when it has none); else a login. */
  private async sharedOrNewLogin(deadline: number): Promise<Session> {
    if (this.store === undefined || this.creds.kind !== "password") return this.login(deadline);
    const { session, reused } = await this.store.share(() => this.login(deadline), {
      now: this.now,
      deadline,
      rejected: this.rejected,
    });
    if (reused) {
      this.redactor.add(session.accessToken);
      this.redactor.add(session.refreshToken);
      if (!this.transport.isClosed) this.session = session;
      this.log(`using the session of ${session.username} that this terraform run logged in with`);
    }
    return session;
  }

  private async login(deadline: number): Promise<Session> {
    if (this.creds.kind !== "password") throw new Error("unreachable: login without password credentials");
    const username = this.creds.username;
    const call: HttpCall<LoginData> = {
      operation: LOGIN_OPERATION,
      method: "POST",
      path: "/authenticate/login",
      body: { username, password: this.creds.passwordMd5 },
      isLogin: true,
      decode: decodeLogin,
    };
    const data = await this.transport.exchange(call, {}, deadline);
    this.redactor.add(data.access_token);
    this.redactor.add(data.refresh_token);
    const session: Session = {
      accessToken: data.access_token,
      refreshToken: data.refresh_token,
      username: data.username || username,
      email: data.email,
      renewAt: renewTime(data.access_token, this.now()),
    };
    if (!this.transport.isClosed) this.session = session;
    this.log(`logged in as ${session.username}`);
    return session;
  }
}

/** When to log in again: `ACCESS_TOKEN_RENEW_MARGIN_MS` (at most half the lifetime) before the access token expires. */
function renewTime(accessToken: string, now: number): number {
  const { expMs, iatMs } = jwtTimes(accessToken);
  // Prefer exp - iat (immune to clock skew between client and server), then exp - now.
  let lifetime = expMs !== undefined ? expMs - (iatMs ?? now) : SPEC_ACCESS_TOKEN_LIFETIME_MS;
  if (!(lifetime > 0)) lifetime = SPEC_ACCESS_TOKEN_LIFETIME_MS;
  return now + lifetime - Math.min(ACCESS_TOKEN_RENEW_MARGIN_MS, lifetime / 2);
}
