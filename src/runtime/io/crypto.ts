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
