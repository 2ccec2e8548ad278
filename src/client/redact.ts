/**
 * Redaction of secrets from anything the client writes: error messages, server messages,
 * body snippets and log lines.
 *
 * The {@link Redactor} learns every secret the client handles (password, its md5, access and
 * refresh tokens, the API token of the credentials, and every `token` value the API returns)
 * and replaces each occurrence, in raw, JSON-escaped and URL-encoded form, with `[redacted]`.
 * On top of that, anything shaped like a bearer credential, a JWT or a credential in a URL is
 * masked even if the client never saw it.
 */

export const REDACTED = "[redacted]";

const BEARER = /\b(Bearer\s+)[^\s"',;]+/gi;
/** User information in a URL, up to its last `@` (`postgres://user:p@ss@host`): a backend's connection string in its error, say. */
const URL_USER_INFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s"']*@/gi;
/** A query parameter whose name says it holds a credential (`?password=…`, `&sslkey=…`, `access_token=…`). */
const SECRET_PARAMETER = /([?&][\w.-]*(?:password|passwd|secret|token|key|credential)[\w.-]*=)[^\s&"']*/gi;
const JWT_LIKE = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;

/**
 * Secrets shorter than this are replaced only where they stand as a whole word (not inside a
 * longer word), so that a short secret doesn't mangle every message; longer ones everywhere.
 */
const SHORT_SECRET = 6;
const HEX = /^[0-9a-f]+$/i;

/**
 * Every secret is looked up by the text at each position of what is redacted (its first SHORT_SECRET
 * characters), never by a pass over all secrets: the writer learns the value of every token an account
 * lists, and redacts a line per token it writes, so a pass per secret made each line cost as much as the
 * account is large.
 */
export class Redactor {
  private readonly secrets = new Set<string>();
  /** Secrets of SHORT_SECRET characters or more, by their first SHORT_SECRET characters (hex ones lower-cased). */
  private readonly byPrefix = new Map<string, string[]>();
  private readonly hexByPrefix = new Map<string, string[]>();
  /** Shorter secrets, replaced only as whole words. */
  private readonly short: RegExp[] = [];

  constructor(secrets: Iterable<string | undefined | null> = []) {
    for (const secret of secrets) this.add(secret);
  }

  /** Register a secret value (empty values are ignored). */
  add(secret: string | undefined | null): void {
    if (typeof secret !== "string" || secret.length === 0) return;
    for (const variant of variantsOf(secret)) {
      if (variant.length === 0 || this.secrets.has(variant)) continue;
      this.secrets.add(variant);
      if (variant.length < SHORT_SECRET) {
        this.short.push(new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(variant)}(?![\\p{L}\\p{N}])`, "gu"));
      } else if (HEX.test(variant)) {
        // Hex digests (md5) are the same secret in any letter case.
        const lower = variant.toLowerCase();
        listIn(this.hexByPrefix, lower.slice(0, SHORT_SECRET)).push(lower);
      } else {
        listIn(this.byPrefix, variant.slice(0, SHORT_SECRET)).push(variant);
      }
    }
  }

  /** Number of distinct secret strings known (variants included). */
  get size(): number {
    return this.secrets.size;
  }

  redact(text: string): string {
    // Every character of every occurrence is hidden, overlapping ones included; each run of them becomes one REDACTED.
    const hidden = new Uint8Array(text.length);
    let found = false;
    const mark = (index: Map<string, string[]>, within: string) => {
      if (index.size === 0) return;
      for (let i = 0; i + SHORT_SECRET <= within.length; i++) {
        const candidates = index.get(within.slice(i, i + SHORT_SECRET));
        if (candidates === undefined) continue;
        for (const secret of candidates) {
          if (!within.startsWith(secret, i)) continue;
          hidden.fill(1, i, i + secret.length);
          found = true;
        }
      }
    };
    mark(this.byPrefix, text);
    // ASCII letters only, so that every index stays where it was.
    if (this.hexByPrefix.size > 0)
      mark(
        this.hexByPrefix,
        text.replace(/[A-F]/g, (c) => c.toLowerCase()),
      );
    for (const pattern of this.short) {
      for (const match of text.matchAll(pattern)) {
        hidden.fill(1, match.index, match.index + match[0].length);
        found = true;
      }
    }
    let out = found ? replaceHidden(text, hidden) : text;
    out = out.replace(BEARER, `$1${REDACTED}`).replace(JWT_LIKE, REDACTED);
    return redactUrlSecrets(out);
  }
}

function listIn(map: Map<string, string[]>, key: string): string[] {
  let list = map.get(key);
  if (list === undefined) map.set(key, (list = []));
  return list;
}

/** `text` with each run of hidden characters replaced by one REDACTED. */
function replaceHidden(text: string, hidden: Uint8Array): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    if (hidden[i] === 0) {
      const start = i;
      while (i < text.length && hidden[i] === 0) i++;
      out += text.slice(start, i);
    } else {
      while (i < text.length && hidden[i] === 1) i++;
      out += REDACTED;
    }
  }
  return out;
}

/** Credentials a URL may carry, whoever's they are: user information, and query parameters named as secrets. */
export function redactUrlSecrets(text: string): string {
  return text.replace(URL_USER_INFO, `$1${REDACTED}@`).replace(SECRET_PARAMETER, `$1${REDACTED}`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function variantsOf(secret: string): string[] {
  const variants = new Set<string>([secret]);
  variants.add(JSON.stringify(secret).slice(1, -1));
  try {
    variants.add(encodeURIComponent(secret));
  } catch {
    // lone surrogates: nothing to add
  }
  return [...variants];
}

/**
 * A short, printable excerpt of a response body for error messages: tags stripped, whitespace
 * collapsed, control characters removed, cut to `max` characters, then redacted.
 */
export function snippet(body: string, redactor: Redactor, max = 120): string {
  const text = body
    .slice(0, 4096)
    .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    // eslint-disable-next-line no-control-regex -- control characters are what this strips
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  // Redact before cutting, so that a secret at the cut can't leak in part.
  const chars = [...redactor.redact(text)];
  return chars.length > max ? `${chars.slice(0, max).join("")}…` : chars.join("");
}
