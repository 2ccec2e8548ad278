import type * as Crypto from "node:crypto";

/** node:crypto, loaded on first use: most script runs (a flavor lookup) need none of it. */
function crypto(): typeof Crypto {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
  return require("node:crypto") as typeof Crypto;
}

/** sha-256 of a string as hex. */
export function sha256Hex(text: string): string {
  return crypto().createHash("sha256").update(text).digest("hex");
}

/** `bytes` random bytes as hex, from the system's secure random source: for names no one can guess. */
export function randomHex(bytes: number): string {
  return crypto().randomBytes(bytes).toString("hex");
}
