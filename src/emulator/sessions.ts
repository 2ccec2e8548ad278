/**
 * Logins and credentials: a login signs an access and a refresh token; each API request's bearer
 * (that pair, or an API token) is checked and says which account the request acts on.
 */
import type * as http from "node:http";

import type { JwtSigner } from "./crypto";
import { md5Hex, randomHex, safeEqual } from "./crypto";
import { unauthorized } from "./http";
import type { TokenStore } from "./token-store";
import type { EmulatorUser } from "./types";
import { requiredString } from "./validation";

export interface SessionOptions {
  /** Signs the access and refresh tokens and checks every bearer, API tokens included. */
  readonly signer: JwtSigner;
  /** Where an API token used as the bearer is looked up. */
  readonly tokens: TokenStore;
  readonly users: ReadonlyMap<string, EmulatorUser>;
  readonly accessTtl: number;
  readonly refreshTtl: number;
  readonly nowSeconds: () => number;
}

export class Sessions {
  /** jti of the access tokens not yet expired by expireAccessTokens(); only this instance signs tokens. */
  private readonly liveAccess = new Set<string>();

  constructor(private readonly options: SessionOptions) {}

  /** Checks the username and password; returns the login's data (the user and its new token pair). */
  login(body: Record<string, unknown>) {
    const { signer, users, accessTtl, refreshTtl } = this.options;
    const username = requiredString(body, "username");
    const password = requiredString(body, "password");
    const user = users.get(username);
    // Compare even for an unknown user, so timing does not reveal which part was wrong.
    const expected = md5Hex(user ? user.password : "\u0000no such user");
    const passwordOk = safeEqual(password.toLowerCase(), expected);
    if (!user || !passwordOk) throw unauthorized("invalid username or password");
    const iat = this.options.nowSeconds();
    const accessJti = randomHex(16);
    this.liveAccess.add(accessJti);
    const access_token = signer.sign({ typ: "access", sub: username, iat, exp: iat + accessTtl, jti: accessJti });
    const refresh_token = signer.sign({ typ: "refresh", sub: username, iat, exp: iat + refreshTtl, jti: randomHex(16) });
    return {
      username: user.answersAs ?? username,
      email: user.email ?? `${username}@example.test`,
      access_token,
      refresh_token,
    };
  }

  /** Checks the request's credentials; returns the account they act on and whose they are (for rate limits). */
  authenticate(req: http.IncomingMessage): { account: string; who: string } {
    const { signer, tokens, users } = this.options;
    const header = req.headers.authorization;
    if (!header) throw unauthorized("missing Authorization header (expected Bearer <token>)");
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!m) throw unauthorized("Authorization header must be Bearer <token>");
    const claims = signer.verify(m[1]);
    if (!claims) throw unauthorized("invalid bearer token");
    const nowSec = this.options.nowSeconds();
    if (claims.typ === "api") {
      const stored = typeof claims.tid === "string" ? tokens.get(claims.tid) : undefined;
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
    const refresh = signer.verify(refreshHeader.trim());
    if (!refresh || refresh.typ !== "refresh" || typeof refresh.exp !== "number") {
      throw unauthorized("invalid refresh-token header");
    }
    if (nowSec >= refresh.exp) throw unauthorized("refresh token expired");
    if (refresh.sub !== claims.sub) throw unauthorized("refresh token does not belong to the access token's user");
    const user = users.get(claims.sub);
    if (!user) throw unauthorized("unknown user");
    return { account: user.account ?? "", who: `user ${user.username}` };
  }

  expireAccessTokens(): void {
    this.liveAccess.clear();
  }
}
