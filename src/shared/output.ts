/**
 * Everything the script prints goes through here, so that no secret from the environment can
 * reach Terraform's log or an error message, whatever a server or a library put in a message.
 */

/** Replaces every occurrence of the given secret values with `[redacted]`. */
export class Redactor {
  private readonly secrets: string[];

  constructor(secrets: Iterable<string | undefined>) {
    // Longest first, so a secret that contains another is replaced whole.
    this.secrets = [...new Set([...secrets].filter((s): s is string => !!s && s.length >= 4))].sort(
      (a, b) => b.length - a.length,
    );
  }

  /** A redactor that also hides `more` (e.g. token values learnt from the API). */
  with(more: Iterable<string | undefined>): Redactor {
    return new Redactor([...this.secrets, ...more]);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join("[redacted]");
    return out;
  }
}

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
  let current = redactor;
  return {
    info: (line) => write(`gpucloud: ${current.redact(line)}\n`),
    warn: (line) => write(`gpucloud: WARNING: ${current.redact(line)}\n`),
    addSecrets: (values) => {
      current = current.with(values);
    },
    redact: (text) => current.redact(text),
  };
}
