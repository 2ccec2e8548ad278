import { GpuCloudError, jwtExpiryMs, md5Hex, Redactor } from "../../src/client";
import { resolveCredentials } from "../../src/client/credentials";
import { snippet } from "../../src/client/redact";
import { backoffDelayMs, DEFAULT_RETRY_POLICY, formatSeconds, parseRetryAfterMs, resolveRetryPolicy } from "../../src/client/retry";
import { formatPath } from "../../src/client/schemas";
import { jwt } from "./helpers";

describe("Redactor", () => {
  it("replaces raw, JSON-escaped, URL-encoded and case-variant forms", () => {
    const r = new Redactor();
    r.add('se"cret pass');
    r.add("ABCDEF0123456789abcdef0123456789");
    const text = `a se"cret pass b se\\"cret pass c se%22cret%20pass d abcdef0123456789ABCDEF0123456789`;
    expect(r.redact(text)).toBe("a [redacted] b [redacted] c [redacted] d [redacted]");
  });

  it("masks bearer values and JWT-shaped strings it never saw", () => {
    const r = new Redactor();
    const token = jwt({ sub: "x", exp: 1 });
    expect(r.redact(`header Authorization: Bearer abc.def-ghi, token ${token}`)).toBe(
      "header Authorization: Bearer [redacted], token [redacted]",
    );
  });

  it("masks credentials a URL carries that it never saw: user information (up to the last @), secret-named parameters", () => {
    const r = new Redactor();
    expect(r.redact("connect to postgres://ci:p@ss/w@db.example/tf?sslmode=disable&password=hunter2&x=1 failed")).toBe(
      "connect to postgres://[redacted]@db.example/tf?sslmode=disable&password=[redacted]&x=1 failed",
    );
    expect(r.redact("GET /api-tokens?limit=50&offset=100 and https://example.test/a?access_token=abc")).toBe(
      "GET /api-tokens?limit=50&offset=100 and https://example.test/a?access_token=[redacted]",
    );
  });

  it("replaces short secrets only as whole words", () => {
    const r = new Redactor();
    r.add("t");
    r.add("abc");
    expect(r.redact("retrying attempt t abc abcdef (abc)")).toBe("retrying attempt [redacted] [redacted] abcdef ([redacted])");
  });

  it("replaces the longest secret first", () => {
    const r = new Redactor();
    r.add("secret-one");
    r.add("secret-one-and-more");
    expect(r.redact("x secret-one-and-more y")).toBe("x [redacted] y");
    // Short ones too, whatever the order they came in, and overlapping ones as one run.
    r.add("q.1");
    r.add("q.1.z");
    expect(r.redact("pw q.1.z end")).toBe("pw [redacted] end");
    const overlap = new Redactor(["q.1", "1.z"]);
    expect(overlap.redact("pw q.1.z end")).toBe("pw [redacted] end");
  });

  it("hides every character of overlapping secrets, as one run", () => {
    const r = new Redactor();
    r.add("abcdef-1234");
    r.add("1234-ghijkl");
    expect(r.redact("x abcdef-1234-ghijkl y abcdef-1234 z")).toBe("x [redacted] y [redacted] z");
  });

  it("finds one secret among 20,000 others, and a hex one in any case", () => {
    const r = new Redactor();
    for (let i = 0; i < 20_000; i++) r.add(`token-value-${i}-${"x".repeat(20)}`);
    r.add("0123456789abcdef0123456789abcdef");
    const text = `created token-value-19999-${"x".repeat(20)} and 0123456789ABCDEF0123456789ABCDEF, not token-value-x`;
    expect(r.redact(text)).toBe("created [redacted] and [redacted], not token-value-x");
  });

  it("builds short sanitized snippets, redacting before cutting", () => {
    const r = new Redactor();
    r.add("0123456789-secret");
    const s = snippet(`<html><script>alert(1)</script><p>Hello\u0007 \n world</p> ${"x".repeat(10)}0123456789-secret</html>`, r, 30);
    expect(s).toBe("Hello world xxxxxxxxxx[redacte…");
    expect(s).not.toContain("0123");
  });
});

describe("credentials", () => {
  it("hashes a plain password and registers both as secrets", () => {
    const c = resolveCredentials({ username: "u", password: "pw" });
    expect(c).toEqual({ kind: "password", username: "u", passwordMd5: md5Hex("pw"), secrets: ["pw", md5Hex("pw")] });
  });

  it("reads exp from a JWT, and nothing from other strings", () => {
    expect(jwtExpiryMs(jwt({ exp: 1234 }))).toBe(1_234_000);
    expect(jwtExpiryMs("opaque")).toBeUndefined();
    expect(jwtExpiryMs("a.b.c")).toBeUndefined();
    expect(jwtExpiryMs(jwt({ exp: "soon" }))).toBeUndefined();
  });
});

describe("retry helpers", () => {
  it("computes capped full-jitter backoff", () => {
    const p = DEFAULT_RETRY_POLICY;
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelayMs(n, p, () => 0.999999))).toEqual([
      249, 499, 999, 1999, 3999, 7999, 7999, 7999,
    ]);
    expect(backoffDelayMs(3, p, () => 0)).toBe(0);
  });

  it("parses Retry-After seconds and HTTP dates", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfterMs("5", now)).toBe(5000);
    expect(parseRetryAfterMs("1.5", now)).toBe(1500);
    expect(parseRetryAfterMs("Wed, 01 Jan 2025 00:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfterMs("Tue, 31 Dec 2024 00:00:30 GMT", now)).toBe(0);
    expect(parseRetryAfterMs("soon", now)).toBeUndefined();
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
    expect(parseRetryAfterMs(["2", "3"], now)).toBe(2000);
  });

  it("validates the policy", () => {
    expect(resolveRetryPolicy({ maxAttempts: 0 })).toMatch(/maxAttempts/);
    expect(resolveRetryPolicy({ baseDelayMs: 10, maxDelayMs: 5 })).toMatch(/maxDelayMs/);
    expect(resolveRetryPolicy({ maxAttempts: 2 })).toEqual({ ...DEFAULT_RETRY_POLICY, maxAttempts: 2 });
  });

  it("formats durations", () => {
    expect([0, 40, 400, 1234, 12_345].map(formatSeconds)).toEqual(["0s", "0.04s", "0.4s", "1.2s", "12s"]);
  });
});

describe("errors and paths", () => {
  it("formats zod paths", () => {
    expect(formatPath(["data", 0, "products", 2, "price"])).toBe("data[0].products[2].price");
    expect(formatPath(["data", "odd key"])).toBe('data["odd key"]');
    expect(formatPath([])).toBe("(root)");
  });

  it("prefixes the operation and serializes without a stack", () => {
    const e = new GpuCloudError({ operation: "op (GET /x)", kind: "server", detail: "HTTP 500", httpStatus: 500, retryable: true });
    expect(e.message).toBe("op (GET /x): HTTP 500");
    expect(e.with({ detail: "other" }).message).toBe("op (GET /x): other");
    expect(JSON.parse(JSON.stringify(e))).toMatchObject({ operation: "op (GET /x)", kind: "server", httpStatus: 500, retryable: true });
  });
});
