import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Lower-case hex md5 of the UTF-8 bytes of `text` (the form in which clients send passwords). */
export function md5Hex(text: string): string {
  return createHash("md5").update(text, "utf8").digest("hex");
}

/** Constant-time string comparison (the length of `expected` may leak, its content does not). */
export function safeEqual(actual: string, expected: string): boolean {
  const a = Buffer.from(actual, "utf8");
  const b = Buffer.from(expected, "utf8");
  if (a.length !== b.length) {
    timingSafeEqual(b, b);
    return false;
  }
  return timingSafeEqual(a, b);
}

/** Random lower-case hex of `bytes` bytes. */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

const HEADER = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");
const B64URL = /^[A-Za-z0-9_-]+$/;

/** Signs and verifies compact HS256 JWTs with a random secret that lives as long as the instance. */
export class JwtSigner {
  private readonly secret = randomBytes(32);

  sign(payload: Readonly<Record<string, unknown>>): string {
    const body = `${HEADER}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}`;
    return `${body}.${this.mac(body)}`;
  }

  /** The payload when the token is well-formed and signed by this instance, else undefined. */
  verify(token: string): Record<string, unknown> | undefined {
    const parts = token.split(".");
    if (parts.length !== 3 || !parts.every((p) => B64URL.test(p))) return undefined;
    const [header, payload, signature] = parts;
    if (!safeEqual(signature, this.mac(`${header}.${payload}`))) return undefined;
    try {
      const decoded: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
      if (typeof decoded !== "object" || decoded === null || Array.isArray(decoded)) return undefined;
      return decoded as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }

  private mac(data: string): string {
    return createHmac("sha256", this.secret).update(data).digest("base64url");
  }
}

/** mulberry32: a tiny deterministic PRNG returning floats in [0, 1). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
