/**
 * Everything the script prints goes through here, so that no secret from the environment can
 * reach Terraform's log or an error message, whatever a server or a library put in a message.
 */

import { Redactor } from "../client/redact";

/**
 * One redactor for the client and for every line the script or the CLI prints: it knows the
 * secrets' escaped and encoded forms, hex digests in any letter case, and hides short secrets
 * where they stand as a word (a second, simpler copy here let those through).
 */
export { Redactor };

export interface Output {
  /** A progress line for Terraform's log. */
  info(line: string): void;
  /** A warning for Terraform's log, marked so that it stands out. */
  warn(line: string): void;
  /** Hide these values from now on (e.g. token values the API returned). */
  addSecrets(values: Iterable<string | undefined>): void;
  /** The redacted form of a text, for error messages. */
  redact(text: string): string;
}

/**
 * Lines go to `write` prefixed with `gpucloud:`. For local-exec that is stdout (Terraform shows it
 * in the apply log); for the external data source it must be stderr, because stdout carries the
 * JSON result.
 */
export function createOutput(write: (text: string) => void, redactor: Redactor): Output {
  return {
    info: (line) => write(`gpucloud: ${redactor.redact(line)}\n`),
    warn: (line) => write(`gpucloud: WARNING: ${redactor.redact(line)}\n`),
    addSecrets: (values) => {
      for (const value of values) redactor.add(value);
    },
    redact: (text) => redactor.redact(text),
  };
}
