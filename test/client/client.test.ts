import type * as http from "node:http";
import * as net from "node:net";

import type { GpuCloudClientOptions } from "../../src/client";
import { type GpuCloudError, listAllTokens, md5Hex } from "../../src/client";
import type { FakeApi } from "./fake-api";
import { startFakeApi } from "./fake-api";
import type { Harness, Stub } from "./helpers";
import {
  caught,
  closeAfterEach,
  drop,
  fail,
  fakeTime,
  flavor,
  jwt,
  newClient,
  ok,
  recordingClient,
  sendJson,
  startStub,
  track,
} from "./helpers";

const PASSWORD = "password"; // md5 5f4dcc3b5aa765d61d8327deb882cf99

closeAfterEach();

function makeClient(url: string, options: Partial<GpuCloudClientOptions> = {}): Harness {
  return recordingClient({
    baseUrl: url,
    credentials: { username: "alice", password: PASSWORD },
    random: () => 0.5,
    requestTimeoutMs: 2000,
    ...options,
  });
}

async function api(options: Parameters<typeof startFakeApi>[0] = {}): Promise<FakeApi> {
  return track(await startFakeApi(options));
}

async function stub(handler: Parameters<typeof startStub>[0]): Promise<Stub> {
  return track(await startStub(handler));
}

/** Waits `ms`, or less if the client goes away (so no timer outlives a test). */
function pause(ms: number, res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    // The listener goes when the timer fires: a loop of pauses on one response must not pile them up.
    const closed = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      res.off("close", closed);
      resolve();
    }, ms);
    res.once("close", closed);
  });
}

/**
 * Waits until the response drains or closes, removing the other listener: leaving a "close" listener per
 * write made Node print MaxListenersExceededWarning (11 close listeners on one ServerResponse) in `npm test`.
 */
function drainOrClose(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done).off("close", done);
      resolve();
    };
    res.once("drain", done).once("close", done);
  });
}

/** A port with nothing listening. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe("configuration", () => {
  const creds = { username: "alice", password: PASSWORD };

  it("validates and normalizes baseUrl", () => {
    expect(newClient({ baseUrl: "http://h:1/api//", credentials: creds }).baseUrl).toBe("http://h:1/api");
    expect(newClient({ baseUrl: "https://h/", credentials: creds }).baseUrl).toBe("https://h");
    for (const bad of ["ftp://h", "not a url", "", "http://u:p@h", "http://h/?x=1"]) {
      const e = (() => {
        try {
          newClient({ baseUrl: bad, credentials: creds });
        } catch (err) {
          return err as GpuCloudError;
        }
        throw new Error(`accepted ${bad}`);
      })();
      expect(e.kind).toBe("validation");
      expect(e.message).toMatch(/baseUrl/);
    }
  });

  it("never quotes a baseUrl that may hold a credential, even one that does not parse", () => {
    for (const bad of ["https://u:leak-me-7f3@ho st/", "http://u:leak-me-7f3@[bad"]) {
      let message = "";
      try {
        newClient({ baseUrl: bad, credentials: creds });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/baseUrl/);
      expect(message).not.toContain("leak-me-7f3");
    }
  });

  it("validates credentials without echoing them", () => {
    const attempt = (credentials: unknown) => {
      try {
        newClient({ baseUrl: "http://h", credentials: credentials as GpuCloudClientOptions["credentials"] });
        return undefined;
      } catch (e) {
        return e as GpuCloudError;
      }
    };
    expect(attempt({ username: "a", passwordMd5: "not-a-hash-zzzz" })!.message).toMatch(/passwordMd5 must be 32 hexadecimal/);
    expect(attempt({ username: "a", passwordMd5: "not-a-hash-zzzz" })!.message).not.toContain("not-a-hash-zzzz");
    expect(attempt({ username: "a", password: "x", passwordMd5: md5Hex("x") })!.message).toMatch(/exactly one/);
    expect(attempt({ apiToken: "" })!.message).toMatch(/apiToken/);
    expect(attempt({ apiToken: "a\nb" })!.message).toMatch(/control characters/);
    expect(attempt({ password: "x" })!.message).toMatch(/username/);
    expect(attempt({ username: "a", passwordMd5: md5Hex("x").toUpperCase() })).toBeUndefined();
    expect(attempt({ apiToken: "tok" })).toBeUndefined();
  });

  it("validates token names client-side (1..50 code points) before sending", async () => {
    const server = await stub((_req, res) => ok(res, {}));
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    const tooLong = "🚀".repeat(51);
    const e = await caught(client.createToken({ name: tooLong }));
    expect(e.kind).toBe("validation");
    expect(e.operation).toBe("create API token (POST /api-tokens)");
    expect(e.message).toMatch(/name/);
    expect(e.message).toMatch(/50/);
    expect((await caught(client.createToken({ name: "" }))).message).toMatch(/name must be 1 to 50/);
    expect((await caught(client.updateToken("x", { name: "a".repeat(51) }))).message).toMatch(/name.*50/);
    expect(server.requests).toHaveLength(0);
  });

  it("accepts 50 astral code points (100 UTF-16 units)", async () => {
    const fake = await api();
    const { client } = makeClient(fake.url);
    const name = "🚀".repeat(50);
    const created = await client.createToken({ name });
    expect(created.name).toBe(name);
  });

  it("fails a request that cannot be built (a header value outside Latin-1) as invalid, unsent, and still closes", async () => {
    const fake = await api();
    const { client } = makeClient(fake.url, { userAgent: "probe-\u2192-agent", retry: { maxAttempts: 1 } });
    const err = await caught(client.listFlavors());
    expect(err).toMatchObject({ kind: "validation", mayHaveBeenProcessed: false });
    expect(fake.stub.requests).toHaveLength(0);
    // The failed request is not counted as one in flight: close() does not wait for it.
    let closed = false;
    await Promise.race([client.close().then(() => (closed = true)), new Promise((resolve) => setTimeout(resolve, 1000))]);
    expect(closed).toBe(true);
  });

  it("fails calls after close()", async () => {
    const fake = await api();
    const { client } = makeClient(fake.url);
    await client.close();
    await client.close();
    expect((await caught(client.listFlavors())).message).toMatch(/closed/);
  });
});

describe("authentication", () => {
  it("logs in lazily with the md5 of the password and sends both headers", async () => {
    const fake = await api();
    const { client, logs } = makeClient(fake.url);
    expect(fake.stub.requests).toHaveLength(0);
    await client.listFlavors();
    const [login, call] = fake.stub.requests;
    expect(login!.path).toBe("/authenticate/login");
    expect(login!.json).toEqual({ username: "alice", password: md5Hex(PASSWORD) });
    expect(call!.headers.authorization).toBe(`Bearer ${fake.accessTokens[0]}`);
    expect(typeof call!.headers["refresh-token"]).toBe("string");
    expect(call!.headers["user-agent"]).toBe("cdktf-gpucloud-client");
    expect(logs).toContain("logged in as alice");
    await client.listFlavors();
    expect(fake.logins).toBe(1);
  });

  it("sends a given md5 as is (lowercased)", async () => {
    const fake = await api();
    const { client } = makeClient(fake.url, {
      credentials: { username: "alice", passwordMd5: md5Hex(PASSWORD).toUpperCase() },
    });
    const info = await client.login();
    expect(info).toMatchObject({ username: "alice", email: "alice@example.test" });
    expect(fake.stub.requests[0]!.json).toEqual({ username: "alice", password: md5Hex(PASSWORD) });
  });

  it("shares one in-flight login between concurrent calls", async () => {
    const fake = await api();
    const { client } = makeClient(fake.url);
    await Promise.all([client.listFlavors(), client.listTokens(), client.listFlavors(), client.login()]);
    expect(fake.logins).toBe(1);
  });

  it("uses only Authorization with an API token, and never logs in", async () => {
    const fake = await api();
    const value = fake.createToken("ci").token;
    const { client } = makeClient(fake.url, { credentials: { apiToken: value } });
    expect(await client.login()).toBeUndefined();
    await client.listTokens();
    expect(fake.stub.requests).toHaveLength(1);
    expect(fake.stub.requests[0]!.headers.authorization).toBe(`Bearer ${value}`);
    expect(fake.stub.requests[0]!.headers["refresh-token"]).toBeUndefined();
  });

  it("treats a 401 with an API token as final", async () => {
    const fake = await api();
    const { client } = makeClient(fake.url, { credentials: { apiToken: "revoked-token-value" } });
    const e = await caught(client.listTokens());
    expect(e.kind).toBe("auth");
    expect(e.retryable).toBe(false);
    expect(e.httpStatus).toBe(401);
    expect(e.message).toMatch(/the API token was rejected \(HTTP 401\): access token expired/);
    expect(e.operation).toBe("list API tokens (GET /api-tokens)");
    expect(fake.stub.requests).toHaveLength(1);
  });

  it("reports a failed login as an auth error naming the user", async () => {
    const fake = await api();
    const { client } = makeClient(fake.url, { credentials: { username: "alice", password: "wrong" } });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("auth");
    expect(e.operation).toBe("log in (POST /authenticate/login)");
    expect(e.message).toMatch(/login as alice failed \(HTTP 401\): invalid username or password/);
    expect(fake.stub.requests).toHaveLength(1);
  });

  it("logs in again once, transparently, when the access token is rejected", async () => {
    const fake = await api();
    const { client, logs } = makeClient(fake.url);
    await client.listFlavors();
    fake.validAccess.clear(); // the server forgets every access token
    await client.listFlavors();
    expect(fake.logins).toBe(2);
    expect(logs.some((l) => /access token rejected by GET \/flavors \(HTTP 401\); logging in again/.test(l))).toBe(true);
  });

  it("re-logs in on status:false with HTTP 401 and gives up after the second rejection", async () => {
    const server = await stub((req, res) => {
      if (req.path === "/authenticate/login") {
        return ok(res, { username: "alice", email: "a@x", access_token: jwt({ n: Math.random() }), refresh_token: "r" });
      }
      return fail(res, 401, "token invalid");
    });
    const { client } = makeClient(server.url);
    const e = await caught(client.listTokens());
    expect(e.kind).toBe("auth");
    expect(e.message).toMatch(/access token was rejected \(HTTP 401\): token invalid \(even after logging in again\)/);
    expect(server.count("POST", "/authenticate/login")).toBe(2);
    expect(server.count("GET", "/api-tokens")).toBe(2);
  });

  it("logs in again proactively when less than 60 s of the access token remain", async () => {
    const time = fakeTime();
    const fake = await api({ nowSeconds: () => Math.floor(time.now() / 1000) });
    const { client, logs } = makeClient(fake.url, { now: time.now });
    await client.listFlavors();
    time.advance(1700_000); // 100 s left
    await client.listFlavors();
    expect(fake.logins).toBe(1);
    time.advance(50_000); // 50 s left
    await client.listFlavors();
    expect(fake.logins).toBe(2);
    // no request was rejected: the renewal happened before sending
    expect(fake.stub.requests.map((r) => r.path)).toEqual([
      "/authenticate/login",
      "/flavors",
      "/flavors",
      "/authenticate/login",
      "/flavors",
    ]);
    expect(logs.some((l) => /about to expire; logging in again/.test(l))).toBe(true);
  });

  it("renews short-lived tokens at half their lifetime rather than on every call", async () => {
    const time = fakeTime();
    const fake = await api({ nowSeconds: () => Math.floor(time.now() / 1000), accessTtlSeconds: 40 });
    const { client } = makeClient(fake.url, { now: time.now });
    await client.listFlavors();
    await client.listFlavors();
    expect(fake.logins).toBe(1);
    time.advance(21_000);
    await client.listFlavors();
    expect(fake.logins).toBe(2);
  });
});

describe("responses", () => {
  const groups = [
    {
      region: "Norway East",
      products: [
        flavor({ id: "a" }),
        // fields the samples omit, an unknown field, null description-like optionals
        { ...flavor({ id: "b" }), bandwidth: undefined, cycle: undefined, future_field: { x: 1 } },
        flavor({ id: "c", ephemeral: 200, stock_available: true }),
      ],
      zone: "extra",
    },
  ];

  it("accepts optional and unknown fields, keeping the unknown ones", async () => {
    const server = await stub((_req, res) => ok(res, groups));
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    const result = await client.listFlavors("r-no");
    expect(server.requests[0]!.query.get("region_id")).toBe("r-no");
    expect(result[0]!.zone).toBe("extra");
    const [a, b, c] = result[0]!.products;
    expect(a!.stock_available).toBeUndefined();
    expect(b!.cycle).toBe("hourly");
    expect(b!.bandwidth).toBeUndefined();
    expect(b!.future_field).toEqual({ x: 1 });
    expect(c!.ephemeral).toBe(200);
    expect(c!.stock_available).toBe(true);
  });

  it("rejects a mistyped field with the operation and the field path", async () => {
    const bad = [{ region: "X", products: [flavor(), flavor(), flavor({ price: "2.40" })] }];
    const server = await stub((_req, res) => ok(res, bad));
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("protocol");
    expect(e.retryable).toBe(false);
    expect(e.message).toContain("invalid response from GET /flavors: data[0].products[2].price: expected number, received string");
    expect(server.requests).toHaveLength(1);
  });

  it("rejects a missing required field and a missing total", async () => {
    const server = await stub((req, res) => {
      if (req.method === "POST") return ok(res, { id: "t1", name: "n", token: "v" }); // no created_at
      return ok(res, [{ id: "t1", name: "n", token: "v", created_at: 1 }]); // no total
    });
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    expect((await caught(client.createToken({ name: "n" }))).message).toMatch(/data\.created_at: expected number, received undefined/);
    expect((await caught(client.listTokens())).message).toMatch(/invalid response from GET \/api-tokens: total: expected number/);
  });

  it("normalizes a null or absent description to an empty string", async () => {
    const server = await stub((_req, res) =>
      ok(
        res,
        [
          { id: "1", name: "a", token: "v1", created_at: 1, description: null, last_used: 0 },
          { id: "2", name: "b", token: "v2", created_at: 2 },
        ],
        { total: 2 },
      ),
    );
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    const { tokens, total } = await client.listTokens({ limit: 5, offset: 0, sortField: "created_at", sortOrder: "asc" });
    expect(total).toBe(2);
    expect(tokens.map((t) => t.description)).toEqual(["", ""]);
    expect(tokens[1]!.last_used).toBeUndefined();
    expect(Object.fromEntries(server.requests[0]!.query)).toEqual({ limit: "5", offset: "0", sortField: "created_at", sortOrder: "asc" });
  });

  it("treats status:false with HTTP 200 as an error carrying the server's message", async () => {
    const server = await stub((_req, res) => sendJson(res, 200, { status: false, message: "quota exceeded", data: null }));
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    const e = await caught(client.createToken({ name: "ci" }));
    expect(e.kind).toBe("validation");
    expect(e.serverMessage).toBe("quota exceeded");
    expect(e.httpStatus).toBe(200);
    expect(e.message).toBe("create API token (POST /api-tokens): POST /api-tokens failed (status false): quota exceeded");
    expect(server.requests).toHaveLength(1);
  });

  it("maps 404 to not-found and 400 to validation, without retrying", async () => {
    const server = await stub((req, res) =>
      req.method === "PUT" ? fail(res, 404, "API token not found") : fail(res, 400, "limit must be an integer"),
    );
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    const e404 = await caught(client.updateToken("tok 1", { name: "x" }));
    expect(e404.kind).toBe("not-found");
    expect(e404.operation).toBe("update API token (PUT /api-tokens/tok%201)");
    expect(e404.message).toMatch(/HTTP 404 from PUT \/api-tokens\/tok%201: API token not found/);
    const e400 = await caught(client.listTokens());
    expect(e400.kind).toBe("validation");
    expect(e400.serverMessage).toBe("limit must be an integer");
    expect(server.requests).toHaveLength(2);
  });

  it("reports a non-JSON body with the request, the HTTP status and a short sanitized snippet", async () => {
    const html =
      "<html>\r\n<head><title>502 Bad Gateway</title><style>body{color:red}</style></head>\r\n<body><center><h1>502 Bad Gateway</h1></center>" +
      `<hr><center>nginx</center>${"x".repeat(5000)}</body></html>`;
    const server = await stub((_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end(html);
    });
    const { client, logs } = makeClient(server.url, { credentials: { apiToken: "test-api-token" }, retry: { maxAttempts: 5 } });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("server");
    expect(e.httpStatus).toBe(502);
    expect(e.attempts).toBe(5);
    expect(e.message).toMatch(
      /^list flavors \(GET \/flavors\): HTTP 502 from GET \/flavors with a non-JSON body \(text\/html\): "502 Bad Gateway 502 Bad Gateway nginx x+…" \(gave up after 5 attempts in /,
    );
    expect(e.message).not.toContain("<");
    expect(e.message).not.toContain("color:red");
    expect(e.message.length).toBeLessThan(300);
    expect(server.requests).toHaveLength(5);
    expect(logs.filter((l) => l.startsWith("retrying"))).toEqual([
      "retrying GET /flavors after HTTP 502 (attempt 2/5, waiting 0.1s)",
      "retrying GET /flavors after HTTP 502 (attempt 3/5, waiting 0.3s)",
      "retrying GET /flavors after HTTP 502 (attempt 4/5, waiting 0.5s)",
      "retrying GET /flavors after HTTP 502 (attempt 5/5, waiting 1s)",
    ]);
  });

  it("reports a 200 with a non-JSON body as a protocol error", async () => {
    const server = await stub((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("OK");
    });
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("protocol");
    expect(e.message).toMatch(/HTTP 200 from GET \/flavors with a non-JSON body \(text\/plain\): "OK"/);
  });

  it.each([
    ["says so in its content-length", true],
    ["is sent chunked", false],
  ])("refuses a response over 16 MiB that %s, without reading it to its end", async (_how, announced) => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const server = await stub(async (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", ...(announced ? { "content-length": String(32 * chunk.length) } : {}) });
      // 32 MiB, in steps that wait for the client: it stops reading at 16.
      for (let i = 0; i < 32 && !res.destroyed; i++) if (!res.write(chunk)) await drainOrClose(res);
      res.end();
    });
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" }, retry: { maxAttempts: 1 } });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("protocol");
    expect(e.message).toMatch(/GET \/flavors: response too large/);
  });
});

describe("retries", () => {
  it("retries 5xx and succeeds", async () => {
    let n = 0;
    const server = await stub((_req, res) => (++n < 3 ? fail(res, 503, "busy") : ok(res, [])));
    const { client, sleeps, logs } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    expect(await client.listFlavors()).toEqual([]);
    expect(server.requests).toHaveLength(3);
    // full jitter: random 0.5 × min(8000, 250 × 2^(n-1))
    expect(sleeps).toEqual([125, 250]);
    expect(logs[0]).toBe("retrying GET /flavors after HTTP 503 (attempt 2, waiting 0.1s)");
  });

  it("retries a login refused with status false when the message says the server failed", async () => {
    let n = 0;
    const fake = await api({
      intercept: (req, res) => {
        if (req.path === "/authenticate/login" && ++n === 1) {
          sendJson(res, 200, { status: false, message: "bad gateway", data: null });
          return true;
        }
        return false;
      },
    });
    const { client, logs } = makeClient(fake.url);
    await client.listFlavors();
    expect(fake.logins).toBe(1);
    // The request that failed first: the log in, then the request it was for.
    expect(logs[0]).toMatch(
      /^retrying log in \(POST \/authenticate\/login\), then GET \/flavors, after status false \(HTTP 200\) \(attempt 2/,
    );
  });

  it("retries until the deadline, not a fixed number of attempts", async () => {
    let n = 0;
    const server = await stub((_req, res) => (++n <= 10 ? fail(res, 502, "bad gateway") : ok(res, [])));
    const time = fakeTime();
    const { client } = makeClient(server.url, {
      credentials: { apiToken: "test-api-token" },
      now: time.now,
      sleep: time.sleep,
      random: () => 0.999,
    });
    expect(await client.listFlavors()).toEqual([]);
    expect(server.requests).toHaveLength(11); // the old fixed count gave up after 5
    // capped exponential backoff: 250 ms doubling, at most 8 s (times the jitter)
    expect(time.sleeps.slice(0, 7)).toEqual([249, 499, 999, 1998, 3996, 7992, 7992]);
    expect(time.sleeps.reduce((a, b) => a + b, 0)).toBeLessThan(120_000);
  });

  it("says the budget is used up when a deadline has passed before a request", async () => {
    const time = fakeTime();
    const server = await stub((_req, res) => ok(res, []));
    const { client } = makeClient(server.url, {
      credentials: { apiToken: "test-api-token" },
      now: time.now,
      deadline: time.now() + 20,
      totalTimeoutMs: 5000,
    });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("timeout");
    expect(e.message).toBe("list flavors (GET /flavors): the time budget of 5s is used up (no time left for GET /flavors)");
    expect(server.requests).toHaveLength(0);
  });

  it("honours Retry-After in seconds and as an HTTP date on 429", async () => {
    const time = fakeTime();
    let n = 0;
    const server = await stub((_req, res) => {
      n++;
      if (n === 1) return fail(res, 429, "slow down", { "retry-after": "3" });
      if (n === 2) return fail(res, 429, "slow down", { "retry-after": new Date(time.now() + 7000).toUTCString() });
      return ok(res, []);
    });
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" }, now: time.now, sleep: time.sleep });
    await client.listFlavors();
    expect(time.sleeps).toEqual([3000, 7000]);
  });

  it("fails at once with kind timeout when Retry-After does not fit the deadline", async () => {
    const server = await stub((_req, res) => fail(res, 429, "slow down", { "retry-after": "600" }));
    const time = fakeTime();
    const { client } = makeClient(server.url, {
      credentials: { apiToken: "test-api-token" },
      now: time.now,
      sleep: time.sleep,
      totalTimeoutMs: 60_000,
    });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("timeout");
    expect(e.httpStatus).toBe(429);
    expect(e.serverMessage).toBe("slow down");
    expect(e.message).toMatch(
      /gave up after 0s and 1 attempt: the time budget of 60s leaves no room for another attempt; the server asked to wait 600s; last error: HTTP 429 from GET \/flavors: slow down/,
    );
    expect(time.sleeps).toEqual([]);
  });

  it("never sleeps past the deadline and says how long and how many attempts", async () => {
    const time = fakeTime();
    const server = await stub((_req, res) => {
      time.advance(400); // each request "takes" 400 ms
      fail(res, 503, "busy");
    });
    const { client } = makeClient(server.url, {
      credentials: { apiToken: "test-api-token" },
      now: time.now,
      sleep: time.sleep,
      random: () => 0.999,
      totalTimeoutMs: 2000,
      retry: { maxAttempts: 10, baseDelayMs: 200, maxDelayMs: 1000 },
    });
    const start = time.now();
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("timeout");
    expect(e.message).toMatch(
      /gave up after \d(\.\d)?s and \d attempts: the time budget of 2s leaves no room for another attempt; last error: HTTP 503 from GET \/flavors: busy/,
    );
    expect(time.now() - start).toBeLessThanOrEqual(2000);
    expect(e.attempts).toBe(server.requests.length);
  });

  it("retries a reset connection (GET) and succeeds", async () => {
    let n = 0;
    const server = await stub((_req, res) => (++n === 1 ? drop(res) : ok(res, [])));
    const { client, logs } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    await client.listFlavors();
    expect(server.requests).toHaveLength(2);
    // Library error codes in words, the code in parentheses.
    expect(logs[0]).toMatch(
      /^retrying GET \/flavors after (a reset connection \(ECONNRESET\)|a connection closed by the other side \(UND_ERR_SOCKET\)) \(attempt 2,/,
    );
  });

  it("gives up on a refused connection after the attempt budget, kind network", async () => {
    const port = await closedPort();
    const { client, sleeps } = makeClient(`http://127.0.0.1:${port}`, {
      credentials: { apiToken: "test-api-token" },
      retry: { maxAttempts: 3 },
    });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("network");
    expect(e.code).toBe("ECONNREFUSED");
    expect(e.attempts).toBe(3);
    expect(e.message).toMatch(/GET \/flavors: connection refused \(ECONNREFUSED.*\(gave up after 3 attempts/);
    expect(sleeps).toHaveLength(2);
  });

  it("gives up on an API that refuses connections after a few quick retries (unreachableMs), naming the URL and where it came from", async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    const { client, sleeps, logs } = makeClient(url, {
      credentials: { username: "alice", password: "pw-secret-1" },
      baseUrlSource: "from GPUCLOUD_STAGING_BASE_URL; account GPUCLOUD_STAGING_*",
      totalTimeoutMs: 120_000,
    });
    const e = await caught(client.listAllTokens());
    expect(e.kind).toBe("network");
    expect(e.code).toBe("ECONNREFUSED");
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(
      new RegExp(
        `cannot reach the API at ${url.replace(/[.]/g, "\\.")} \\(from GPUCLOUD_STAGING_BASE_URL; account GPUCLOUD_STAGING_\\*\\): ` +
          `a refused connection \\(ECONNREFUSED\\) on \\d+ attempts`,
      ),
    );
    // A few retries within the 15 s window, not the 120 s budget.
    expect(sleeps.length).toBeGreaterThanOrEqual(2);
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(15_000);
    expect(logs.filter((l) => l.startsWith("retrying")).length).toBe(sleeps.length);
    expect(e.message).not.toContain("pw-secret-1");
  });

  it("gives up on a host name that does not resolve within unreachableMs as well", async () => {
    const { client, sleeps } = makeClient("http://gpucloud-test.invalid", {
      credentials: { apiToken: "test-api-token" },
      retry: { unreachableMs: 2000 },
    });
    const e = await caught(client.listFlavors());
    expect(["ENOTFOUND", "EAI_AGAIN"]).toContain(e.code);
    expect(e.message).toMatch(/cannot reach the API at http:\/\/gpucloud-test\.invalid: an? (unknown host name|failed host name look-up)/);
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2000);
  });

  it("limits only failures to reach the API: a server that answers 503 is retried as before", async () => {
    let n = 0;
    const server = await stub((_req, res) => (++n <= 3 ? fail(res, 503, "unavailable") : ok(res, [])));
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" }, retry: { unreachableMs: 0 } });
    await client.listFlavors();
    expect(n).toBe(4);
  });

  it("a request that gives up while throttled (429) says so, with the rateLimitAdvice; other failures do not", async () => {
    const server = await stub((_req, res) =>
      sendJson(res, 429, { status: false, message: "at most 20 requests per second", data: null }, { "retry-after": "1" }),
    );
    const { client } = makeClient(server.url, {
      credentials: { apiToken: "test-api-token" },
      totalTimeoutMs: 3500,
      rateLimitAdvice: "raise THE_BUDGET",
    });
    const e = await caught(client.listFlavors());
    expect(e.message).toMatch(
      /last error: HTTP 429 from GET \/flavors: at most 20 requests per second\. The API kept answering 429 \(rate limited\): raise THE_BUDGET$/,
    );
    const down = await stub((_req, res) => fail(res, 503, "unavailable"));
    const other = makeClient(down.url, {
      credentials: { apiToken: "test-api-token" },
      totalTimeoutMs: 3500,
      rateLimitAdvice: "raise THE_BUDGET",
    });
    expect((await caught(other.client.listFlavors())).message).not.toContain("THE_BUDGET");
  });

  it("gives a connect that never completes (a TLS handshake left unanswered) the connect timeout: kind timeout, not sent", async () => {
    // Accepts TCP connections and says nothing, so the TLS handshake of an https: URL never ends.
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    track({ close: () => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), silent.close(() => r()))) });
    const port = (silent.address() as net.AddressInfo).port;
    const { client } = makeClient(`https://127.0.0.1:${port}`, {
      credentials: { apiToken: "test-api-token" },
      connectTimeoutMs: 300,
      retry: { maxAttempts: 1 },
    });
    const started = Date.now();
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("timeout");
    expect(e.retryable).toBe(true);
    expect(e.mayHaveBeenProcessed).toBe(false);
    expect(e.message).toMatch(/GET \/flavors: connect timed out/);
    // The connect timeout, not the 2 s request timeout.
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("times out a slow response (whole-request timeout)", async () => {
    const server = await stub(async (_req, res) => {
      await pause(1000, res);
      if (!res.destroyed) ok(res, []);
    });
    const { client } = makeClient(server.url, {
      credentials: { apiToken: "test-api-token" },
      requestTimeoutMs: 100,
      retry: { maxAttempts: 2 },
    });
    const started = Date.now();
    const e = await caught(client.listFlavors());
    expect(Date.now() - started).toBeLessThan(900);
    expect(e.kind).toBe("timeout");
    expect(e.message).toMatch(/GET \/flavors got no complete response within 0\.1s \(gave up after 2 attempts/);
  });

  it("times out a body that trickles (the timeout covers the whole request, not just inactivity)", async () => {
    const server = await stub(async (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      for (let i = 0; i < 20 && !res.destroyed; i++) {
        res.write(" ");
        await pause(30, res);
      }
      if (!res.destroyed) res.end('{"status":true,"message":"","data":[]}');
    });
    const { client } = makeClient(server.url, {
      credentials: { apiToken: "test-api-token" },
      requestTimeoutMs: 150,
      retry: { maxAttempts: 1 },
    });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("timeout");
  });

  it("retries PUT (idempotent) on 5xx", async () => {
    let n = 0;
    const server = await stub((_req, res) =>
      ++n === 1 ? fail(res, 500, "oops") : ok(res, { id: "t1", name: "new", token: "v", created_at: 1 }),
    );
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    expect((await client.updateToken("t1", { name: "new", description: "d" })).name).toBe("new");
    expect(server.requests.map((r) => r.json)).toEqual([
      { name: "new", description: "d" },
      { name: "new", description: "d" },
    ]);
  });

  it("does not retry 501", async () => {
    const server = await stub((_req, res) => fail(res, 501, "not implemented"));
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("server");
    expect(server.requests).toHaveLength(1);
  });
});

describe("create is never blindly retried", () => {
  it("adopts the token when the response to the create was lost", async () => {
    let lost = 1;
    const fake = await api({
      intercept: (req, res, self) => {
        if (req.method === "POST" && req.path === "/api-tokens" && lost > 0) {
          lost--;
          self.createToken((req.json as { name: string }).name);
          drop(res);
          return true;
        }
        return false;
      },
    });
    fake.createToken("other");
    const { client, logs } = makeClient(fake.url);
    const token = await client.createToken({ name: "ci", description: "d" });
    expect(token.name).toBe("ci");
    expect(fake.tokens.filter((t) => t.name === "ci")).toHaveLength(1);
    expect(token.id).toBe(fake.tokens.find((t) => t.name === "ci")!.id);
    expect(fake.stub.count("POST", "/api-tokens")).toBe(1);
    expect(
      logs.some((l) =>
        /checking whether API token "ci" was created despite a (reset connection \(ECONNRESET\)|connection closed by the other side \(UND_ERR_SOCKET\))/.test(
          l,
        ),
      ),
    ).toBe(true);
    expect(logs.some((l) => /adopted API token "ci" \(id tok_\d+\)/.test(l))).toBe(true);
  });

  it("a login that fails while renewing the session before a create is not taken for an ambiguous create", async () => {
    // The create's POST is rejected (401: not processed), and the login that follows fails once with a 502.
    // The POST was sent once and rejected; the failed login says nothing about the create: no settle window.
    let rejectPost = 1;
    let failLogin = 0;
    const fake = await api({
      intercept: (req, res) => {
        if (req.method === "POST" && req.path === "/api-tokens" && rejectPost > 0) {
          rejectPost--;
          failLogin = 1;
          fail(res, 401, "access token expired");
          return true;
        }
        if (req.method === "POST" && req.path === "/authenticate/login" && failLogin > 0) {
          failLogin--;
          fail(res, 502, "bad gateway");
          return true;
        }
        return false;
      },
    });
    const { client, logs } = makeClient(fake.url);
    await client.login();
    const token = await client.createToken({ name: "ci" });
    expect(token.name).toBe("ci");
    expect(fake.tokens.filter((t) => t.name === "ci")).toHaveLength(1);
    expect(fake.stub.count("POST", "/api-tokens")).toBe(2);
    expect(fake.stub.count("GET", "/api-tokens")).toBe(0);
    expect(logs.some((l) => /checking whether/.test(l))).toBe(false);
    expect(logs.some((l) => /retrying log in \(POST \/authenticate\/login\), then POST \/api-tokens, after HTTP 502/.test(l))).toBe(true);
  });

  it("adopts the newest of several tokens of that name", async () => {
    const fake = await api({
      intercept: (req, res) => {
        if (req.method === "POST" && req.path === "/api-tokens") {
          fail(res, 502, "bad gateway");
          return true;
        }
        return false;
      },
    });
    fake.createToken("ci", "", 100);
    const newest = fake.createToken("ci", "", 300);
    fake.createToken("ci", "", 200);
    const { client } = makeClient(fake.url);
    expect((await client.createToken({ name: "ci" })).id).toBe(newest.id);
    expect(fake.stub.count("POST", "/api-tokens")).toBe(1);
  });

  it.each([
    // with random 0.5: each wait × 0.75, and one extra look before the conclusive one
    [503, "after 1, 2 s and at its end (3 s)", 5, [750, 1500, 750], "3"],
    [504, "after 1, 2, 4, 8, 8 s and at its end (20 s)", 8, [750, 1500, 3000, 6000, 6000, 2750], "20"],
  ])(
    "posts again after an HTTP %i when the server did not create the token: settle window %s",
    async (status, _schedule, gets, waits, window) => {
      let n = 0;
      const fake = await api({
        intercept: (req, res) => {
          if (req.method === "POST" && req.path === "/api-tokens" && ++n === 1) {
            fail(res, status, "unavailable");
            return true;
          }
          return false;
        },
      });
      const { client, logs, sleeps } = makeClient(fake.url);
      const token = await client.createToken({ name: "ci" });
      expect(token.name).toBe("ci");
      expect(fake.tokens).toHaveLength(1);
      expect(fake.stub.count("POST", "/api-tokens")).toBe(2);
      expect(fake.stub.count("GET", "/api-tokens")).toBe(gets);
      // the last wait runs to the end of the window, less the time the look-ups took
      expect(sleeps.slice(0, -1)).toEqual(waits.slice(0, -1));
      expect(sleeps[sleeps.length - 1]).toBeLessThanOrEqual(waits[waits.length - 1]!);
      expect(sleeps[sleeps.length - 1]).toBeGreaterThan(waits[waits.length - 1]! - 500);
      // the window as measured, which includes the look-ups' own (real) time
      expect(logs).toContainEqual(
        expect.stringMatching(new RegExp(`^no API token named "ci" appeared within ${window}(\\.\\d)?s; creating it again$`)),
      );
    },
  );

  it("creates exactly one token from a server that fails exactly every 2nd request (the probes shift the POST off the failing slot)", async () => {
    let n = 0;
    const fake = await api({
      intercept: (_req, res) => {
        if (++n % 2 === 0) {
          fail(res, 502, "bad gateway");
          return true;
        }
        return false;
      },
    });
    const { client, logs } = makeClient(fake.url, { deadline: Date.now() + 60_000 });
    const token = await client.createToken({ name: "ci" });
    expect(token.name).toBe("ci");
    expect(fake.tokens.filter((t) => t.name === "ci")).toHaveLength(1);
    expect(logs).toContainEqual(expect.stringMatching(/creating it again$/));
  });

  it("retries 429 directly, without listing", async () => {
    let n = 0;
    const fake = await api({
      intercept: (req, res) => {
        if (req.method === "POST" && req.path === "/api-tokens" && ++n === 1) {
          fail(res, 429, "too many requests", { "retry-after": "1" });
          return true;
        }
        return false;
      },
    });
    const { client, sleeps } = makeClient(fake.url);
    await client.createToken({ name: "ci" });
    expect(fake.stub.count("POST", "/api-tokens")).toBe(2);
    expect(fake.stub.count("GET", "/api-tokens")).toBe(0);
    // Retry-After, then the rest of the window of the pace learnt from the refusal (one request, none accepted before it).
    expect(sleeps[0]).toBe(1000);
    expect(sleeps.slice(1).every((ms) => ms <= 50)).toBe(true);
  });

  it("retries a refused connection directly (the request never reached a server)", async () => {
    const port = await closedPort();
    const { client, logs } = makeClient(`http://127.0.0.1:${port}`, {
      credentials: { apiToken: "test-api-token" },
      retry: { maxAttempts: 2 },
    });
    const e = await caught(client.createToken({ name: "ci" }));
    expect(e.code).toBe("ECONNREFUSED");
    expect(e.outcomeUnknown).toBe(false);
    expect(logs.some((l) => l.startsWith("checking"))).toBe(false);
  });

  it("says the outcome is unknown when every attempt was ambiguous", async () => {
    const fake = await api({
      intercept: (req, res) => {
        if (req.path === "/api-tokens") {
          if (req.method === "POST") fail(res, 500, "boom");
          else drop(res);
          return true;
        }
        return false;
      },
    });
    const { client } = makeClient(fake.url, { totalTimeoutMs: 30_000 });
    const e = await caught(client.createToken({ name: "ci" }));
    expect(e.outcomeUnknown).toBe(true);
    expect(e.kind).toBe("timeout");
    expect(e.message).toMatch(
      /^create API token \(POST \/api-tokens\): HTTP 500 from POST \/api-tokens: boom; whether the token "ci" was created could not be established \(list API tokens \(GET \/api-tokens\): gave up after \d+s and \d+ attempts: the time budget of 30s leaves no room for another attempt; .*\)\. The next apply adopts a token of that name if it exists instead of creating another$/,
    );
    expect(fake.stub.count("POST", "/api-tokens")).toBe(1); // never posted again blindly
    expect(fake.stub.count("GET", "/api-tokens")).toBeGreaterThan(5); // each look-up retried on its own until the deadline
  });

  it("re-logs in during the reconciliation listing if needed", async () => {
    let lost = true;
    const fake = await api({
      intercept: (req, res, self) => {
        if (req.method === "POST" && req.path === "/api-tokens" && lost) {
          lost = false;
          self.createToken("ci");
          self.validAccess.clear();
          drop(res);
          return true;
        }
        return false;
      },
    });
    const { client } = makeClient(fake.url);
    await client.createToken({ name: "ci" });
    expect(fake.tokens).toHaveLength(1);
    expect(fake.logins).toBe(2);
  });
});

describe("secrets never leak", () => {
  it("redacts every credential and token value from errors and log lines", async () => {
    const password = "pa$$w0rd with spaces";
    const md5 = md5Hex(password);
    let created = "";
    let access = "";
    let refresh = "";
    let step = 0;
    const server = await stub((req, res) => {
      if (req.path === "/authenticate/login") {
        access = jwt({ sub: "alice", n: Math.random() });
        refresh = `refresh-${Math.random().toString(36).slice(2)}-opaque`;
        return ok(res, { username: "alice", email: "a@x", access_token: access, refresh_token: refresh });
      }
      if (req.method === "POST") {
        created = `opaque-api-token-${Math.random().toString(36).slice(2)}`;
        return ok(res, { id: "t1", name: "ci", token: created, created_at: 1 });
      }
      step++;
      const echo =
        `you sent password=${password} md5=${md5.toUpperCase()} (json: ${JSON.stringify(password)}, url: ${encodeURIComponent(password)}) ` +
        `auth=${req.headers.authorization} refresh=${req.headers["refresh-token"]} access=${access} new token=${created}`;
      if (step === 1) return fail(res, 503, echo);
      if (step === 2) {
        res.writeHead(502, { "content-type": "text/html" });
        res.end(`<html><body>${created} ${refresh}</body></html>`);
        return;
      }
      return fail(res, 400, echo);
    });
    const logs: string[] = [];
    const { client } = makeClient(server.url, { credentials: { username: "alice", password }, logger: (l) => logs.push(l) });
    const token = await client.createToken({ name: "ci", description: "request-body-marker" });
    expect(token.token).toBe(created); // the caller gets the value; messages never do
    const e = await caught(client.listFlavors());
    expect(e.kind).toBe("validation");
    const everything = [e.message, e.serverMessage ?? "", e.detail, JSON.stringify(e), e.stack ?? "", ...logs].join("\n");
    for (const secret of [
      password,
      md5,
      md5.toUpperCase(),
      access,
      refresh,
      created,
      JSON.stringify(password),
      encodeURIComponent(password),
    ]) {
      expect(everything).not.toContain(secret);
    }
    expect(everything).not.toContain("request-body-marker");
    expect(e.serverMessage).toContain("[redacted]");
    expect(e.serverMessage).toMatch(/auth=Bearer \[redacted\]/);
    expect(client.redact(`x ${created} y`)).toBe("x [redacted] y");
  });

  it("redacts the API token of the credentials", async () => {
    const apiToken = "my-api-token-value-123";
    const server = await stub((_req, res) => fail(res, 403, `token ${apiToken} has been revoked`));
    const { client } = makeClient(server.url, { credentials: { apiToken } });
    const e = await caught(client.listTokens());
    expect(e.message).toBe("list API tokens (GET /api-tokens): the API token was rejected (HTTP 403): token [redacted] has been revoked");
  });
});

describe("pagination over HTTP", () => {
  it("walks a server that clamps the limit, with overlapping pages", async () => {
    const all = Array.from({ length: 47 }, (_, i) => ({ id: `id-${i}`, name: `n${i}`, token: `value-${i}-xyz`, created_at: i }));
    const server = await stub((req, res) => {
      const limit = Math.min(Number(req.query.get("limit")), 6);
      const offset = Number(req.query.get("offset"));
      ok(res, all.slice(offset, offset + limit), { total: all.length });
    });
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    const tokens = await listAllTokens(client, { pageSize: 20 });
    expect(tokens.map((t) => t.id)).toEqual(all.map((t) => t.id));
    // The pages after the first are fetched side by side, so they may arrive in any order.
    expect(server.requests.map((r) => Number(r.query.get("offset"))).sort((a, b) => a - b)).toEqual([0, 5, 10, 15, 20, 25, 30, 35, 40, 45]);
    expect(server.requests.every((r) => r.query.get("sortField") === "created_at" && r.query.get("sortOrder") === "asc")).toBe(true);
  });

  it("fetches pages side by side, also once the server has throttled a request: the pace keeps them to its limit", async () => {
    const all = Array.from({ length: 300 }, (_, i) => ({ id: `id-${i}`, name: `n${i}`, token: `value-${i}-xyz`, created_at: i }));
    const acceptedAt: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    let refused = 0;
    const server = await stub(async (req, res) => {
      const now = Date.now();
      if (acceptedAt.filter((t) => t > now - 1000).length >= 10) {
        refused++;
        return fail(res, 429, "rate limit exceeded: at most 10 requests per second", { "retry-after": "1" });
      }
      acceptedAt.push(now);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await pause(20, res);
      inFlight--;
      const offset = Number(req.query.get("offset"));
      ok(res, all.slice(offset, offset + Math.min(Number(req.query.get("limit")), 20)), { total: all.length });
    });
    // Real time: the server's window and the client's waits on one clock.
    const { client } = makeClient(server.url, {
      credentials: { apiToken: "test-api-token" },
      now: Date.now,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    });
    expect(await listAllTokens(client)).toHaveLength(300);
    expect(refused).toBeGreaterThan(0);
    refused = 0;
    maxInFlight = 0;
    const started = Date.now();
    expect(await listAllTokens(client)).toHaveLength(300);
    expect(refused).toBe(0);
    expect(maxInFlight).toBeGreaterThan(1);
    // 16 pages at 10 a second take about 1.5 s; a pace that collapsed to 2 a second would take 8 s.
    expect(Date.now() - started).toBeLessThan(6_000);
  }, 20_000);

  it("drops sortField/sortOrder when refused (400 or status false), says so once, and keeps it dropped", async () => {
    for (const refuse of [
      (res: Parameters<typeof fail>[0]) => fail(res, 400, "unknown parameter sortField"),
      (res: Parameters<typeof fail>[0]) => sendJson(res, 200, { status: false, message: "unknown parameter sortField", data: null }),
    ]) {
      const all = Array.from({ length: 12 }, (_, i) => ({ id: `id-${i}`, name: `n${i}`, token: `v-${i}-xyz`, created_at: i }));
      const server = await stub((req, res) => {
        if (req.query.has("sortField") || req.query.has("sortOrder")) return refuse(res);
        const offset = Number(req.query.get("offset"));
        ok(res, all.slice(offset, offset + Number(req.query.get("limit") ?? 5)), { total: all.length });
      });
      const { client, logs } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
      expect(await listAllTokens(client, { pageSize: 5 })).toHaveLength(12);
      expect(await listAllTokens(client, { pageSize: 5 })).toHaveLength(12);
      expect(logs.filter((l) => /refused sortField\/sortOrder/.test(l))).toEqual([
        expect.stringMatching(
          /^GET \/api-tokens: the server refused sortField\/sortOrder \((HTTP 400|status false): unknown parameter sortField\); listing in the server's own order from now on$/,
        ),
      ]);
      // one refused request in all; every other request without the sort parameters
      expect(server.requests.filter((r) => r.query.has("sortField"))).toHaveLength(1);
      expect(server.requests).toHaveLength(1 + 3 + 3);
    }
  });

  it("fails a list with one malformed item, naming the item and the field", async () => {
    const server = await stub((_req, res) =>
      ok(
        res,
        [
          { id: "a", name: "ok", token: "v1", created_at: 1.5 },
          { id: "tok_2", name: "ci", token: "v2", created_at: "yesterday" },
        ],
        { total: 2 },
      ),
    );
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    const e = await caught(listAllTokens(client));
    expect(e.kind).toBe("protocol");
    expect(e.message).toBe(
      'list API tokens (GET /api-tokens): invalid response from GET /api-tokens: data[1] (id "tok_2", name "ci"): created_at: expected number, received string',
    );
  });

  it("accepts fractional, millisecond and nanosecond timestamps", async () => {
    const server = await stub((_req, res) =>
      ok(
        res,
        [
          { id: "a", name: "s", token: "v1", created_at: 1_700_000_000.25, last_used: 0 },
          { id: "b", name: "ms", token: "v2", created_at: 1_700_000_000_123, last_used: 1_700_000_000_999.5 },
          { id: "c", name: "ns", token: "v3", created_at: 1.7e18, last_used: 1.7e18 },
        ],
        { total: 3 },
      ),
    );
    const { client } = makeClient(server.url, { credentials: { apiToken: "test-api-token" } });
    const tokens = await listAllTokens(client);
    expect(tokens.map((t) => t.created_at)).toEqual([1_700_000_000.25, 1_700_000_000_123, 1.7e18]);
  });
});
