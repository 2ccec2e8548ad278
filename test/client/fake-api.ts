/** A tiny, scriptable implementation of the API on top of a stub server, for client tests. */
import type * as http from "node:http";

import type { Stub, StubRequest, TokenRecord } from "./helpers";
import { fail, jwt, ok, startStub } from "./helpers";

export interface FakeApiOptions {
  readonly username?: string;
  readonly passwordMd5?: string;
  /** Clock in seconds for issued JWTs. */
  readonly nowSeconds?: () => number;
  readonly accessTtlSeconds?: number;
  /** Clamp of `limit`. */
  readonly maxPageSize?: number;
  readonly flavors?: unknown;
  /** Runs first; return true when it answered the request itself. */
  readonly intercept?: (req: StubRequest, res: http.ServerResponse, api: FakeApi) => boolean | Promise<boolean>;
}

export interface FakeApi {
  readonly stub: Stub;
  readonly url: string;
  readonly tokens: TokenRecord[];
  readonly accessTokens: string[];
  validAccess: Set<string>;
  apiTokenValues: Set<string>;
  logins: number;
  createToken(name: string, description?: string, createdAt?: number): TokenRecord;
  close(): Promise<void>;
}

let seq = 0;

export async function startFakeApi(options: FakeApiOptions = {}): Promise<FakeApi> {
  const username = options.username ?? "alice";
  const passwordMd5 = options.passwordMd5 ?? "5f4dcc3b5aa765d61d8327deb882cf99"; // md5("password")
  const nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  const ttl = options.accessTtlSeconds ?? 1800;
  const api: Partial<FakeApi> & { tokens: TokenRecord[] } = {
    tokens: [],
    accessTokens: [],
    validAccess: new Set(),
    apiTokenValues: new Set(),
    logins: 0,
  };
  const self = api as FakeApi;
  self.createToken = (name, description = "", createdAt) => {
    seq++;
    const record: TokenRecord = {
      id: `tok_${String(seq).padStart(4, "0")}`,
      name,
      description,
      token: jwt({ typ: "api", tid: seq, n: Math.random() }),
      created_at: createdAt ?? nowSeconds(),
      last_used: 0,
    };
    self.tokens.push(record);
    self.apiTokenValues.add(record.token);
    return record;
  };
  const authorized = (req: StubRequest): boolean => {
    const auth = req.headers.authorization ?? "";
    const bearer = auth.startsWith("Bearer ") ? auth.slice(7) : "";
    if (self.apiTokenValues.has(bearer)) return true;
    return self.validAccess.has(bearer) && typeof req.headers["refresh-token"] === "string";
  };
  const stub = await startStub(async (req, res) => {
    if (options.intercept && (await options.intercept(req, res, self))) return;
    if (req.method === "POST" && req.path === "/authenticate/login") {
      const body = req.json as { username?: string; password?: string };
      if (body?.username !== username || body?.password !== passwordMd5) return fail(res, 401, "invalid username or password");
      self.logins++;
      const iat = nowSeconds();
      const access = jwt({ typ: "access", sub: username, iat, exp: iat + ttl, n: Math.random() });
      const refresh = jwt({ typ: "refresh", sub: username, iat, exp: iat + 7200, n: Math.random() });
      self.accessTokens.push(access);
      self.validAccess.add(access);
      return ok(res, { username, email: `${username}@example.test`, access_token: access, refresh_token: refresh });
    }
    if (!authorized(req)) return fail(res, 401, "access token expired");
    if (req.method === "GET" && req.path === "/flavors") return ok(res, options.flavors ?? []);
    if (req.method === "GET" && req.path === "/api-tokens") {
      const limit = Math.min(Number(req.query.get("limit") ?? 10), options.maxPageSize ?? 100);
      const offset = Number(req.query.get("offset") ?? 0);
      const sorted = [...self.tokens].sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
      return ok(res, sorted.slice(offset, offset + limit), { total: sorted.length });
    }
    if (req.method === "POST" && req.path === "/api-tokens") {
      const body = req.json as { name: string; description?: string };
      const { last_used: _omit, ...created } = self.createToken(body.name, body.description);
      void _omit;
      return ok(res, created);
    }
    const m = /^\/api-tokens\/(.+)$/.exec(req.path);
    if (req.method === "PUT" && m) {
      const token = self.tokens.find((t) => t.id === decodeURIComponent(m[1]!));
      if (!token) return fail(res, 404, "API token not found");
      const body = req.json as { name: string; description?: string };
      token.name = body.name;
      if (body.description !== undefined) token.description = body.description;
      const { last_used: _omit, ...updated } = token;
      void _omit;
      return ok(res, updated);
    }
    return fail(res, 404, "not found");
  });
  Object.assign(api, { stub, url: stub.url, close: () => stub.close() });
  return self;
}
