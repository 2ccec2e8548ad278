/**
 * Credentials (spec §5) and the helpers around them: md5 of a plain password, validation of
 * an md5 given as such, and decoding of a JWT's `exp` claim.
 */
import { md5HexOfUtf8 } from "./md5";

/** Username and plain password: the client sends md5(password) to the login endpoint. */
export interface PasswordCredentials {
  readonly username: string;
  readonly password: string;
  readonly passwordMd5?: never;
  readonly apiToken?: never;
}

/** Username and the md5 of the password (32 hex characters), sent to the login endpoint as is. */
export interface PasswordMd5Credentials {
  readonly username: string;
  readonly passwordMd5: string;
  readonly password?: never;
  readonly apiToken?: never;
}

/** A long-lived API token: sent as `Authorization: Bearer <token>`, no login. */
export interface ApiTokenCredentials {
  readonly apiToken: string;
  readonly username?: never;
  readonly password?: never;
  readonly passwordMd5?: never;
}

export type Credentials = PasswordCredentials | PasswordMd5Credentials | ApiTokenCredentials;

/** Credentials after validation: what the client actually uses. */
export type ResolvedCredentials =
  | { readonly kind: "password"; readonly username: string; readonly passwordMd5: string; readonly secrets: readonly string[] }
  | { readonly kind: "api-token"; readonly apiToken: string; readonly secrets: readonly string[] };

/** md5 of a string's UTF-8 bytes as lower-case hex: what the login endpoint wants for a password. */
export function md5Hex(text: string): string {
  return md5HexOfUtf8(text);
}

const MD5_HEX = /^[0-9a-f]{32}$/i;
// Header values must not contain control characters (CR/LF would split headers).
const HEADER_SAFE = /^[\u0020-\u007e\u0080-\u00ff]+$/;

/**
 * Validates credentials and returns their resolved form, or a message saying what's wrong
 * (never containing the secret itself).
 */
export function resolveCredentials(credentials: Credentials | undefined): ResolvedCredentials | string {
  if (credentials === null || typeof credentials !== "object") {
    return "credentials are required: { username, password }, { username, passwordMd5 } or { apiToken }";
  }
  const c = credentials as unknown as Record<string, unknown>;
  const present = ["password", "passwordMd5", "apiToken"].filter((k) => c[k] !== undefined);
  if (present.length !== 1) {
    return `credentials must have exactly one of password, passwordMd5 or apiToken (got ${present.length === 0 ? "none" : present.join(", ")})`;
  }
  if (c.apiToken !== undefined) {
    if (c.username !== undefined) return "credentials: apiToken takes no username";
    if (typeof c.apiToken !== "string" || c.apiToken.trim() === "") return "credentials: apiToken must be a non-empty string";
    const token = c.apiToken.trim();
    if (!HEADER_SAFE.test(token) || /\s/.test(token)) return "credentials: apiToken contains whitespace or control characters";
    return { kind: "api-token", apiToken: token, secrets: [token, c.apiToken] };
  }
  if (typeof c.username !== "string" || c.username.trim() === "") return "credentials: username must be a non-empty string";
  if (c.password !== undefined) {
    if (typeof c.password !== "string" || c.password === "") return "credentials: password must be a non-empty string";
    const hash = md5Hex(c.password);
    return { kind: "password", username: c.username, passwordMd5: hash, secrets: [c.password, hash] };
  }
  if (typeof c.passwordMd5 !== "string" || !MD5_HEX.test(c.passwordMd5.trim())) {
    return "credentials: passwordMd5 must be 32 hexadecimal characters (the md5 of the password)";
  }
  const hash = c.passwordMd5.trim().toLowerCase();
  return { kind: "password", username: c.username, passwordMd5: hash, secrets: [c.passwordMd5, hash] };
}

/** The `exp` and `iat` claims of a JWT in epoch milliseconds; empty when the token is not a readable JWT. */
export function jwtTimes(token: string): { readonly expMs?: number; readonly iatMs?: number } {
  const parts = token.split(".");
  if (parts.length !== 3) return {};
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"));
    if (payload === null || typeof payload !== "object") return {};
    const claims = payload as Record<string, unknown>;
    const ms = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v * 1000 : undefined);
    return { expMs: ms(claims.exp), iatMs: ms(claims.iat) };
  } catch {
    return {};
  }
}

/** The `exp` claim of a JWT in epoch milliseconds, or undefined when the token is not a readable JWT. */
export function jwtExpiryMs(token: string): number | undefined {
  return jwtTimes(token).expMs;
}
