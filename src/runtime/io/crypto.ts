import type { createHash as CreateHash } from "node:crypto";

/**
 * sha-256 of a string as hex, with node:crypto loaded on first use: only the token provisioners
 * hash (hand-off and lock file names), and loading node:crypto at start-up would cost every other
 * run of the script, each read at plan time (docs/performance.md).
 */
export function sha256Hex(text: string): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
  const { createHash } = require("node:crypto") as { createHash: typeof CreateHash };
  return createHash("sha256").update(text).digest("hex");
}
