// Go's encoding/json as the external provider uses it (built with Go 1.23): json.Marshal of the
// query (map[string]string) and json.Unmarshal of the program's output into map[string]string,
// with the error texts Go prints. Those texts reach users in "Result Error: ...", so the
// double reproduces them rather than JavaScript's.

/** json.Marshal for map[string]string: sorted keys, HTML-safe escaping. */
export function goJsonMarshalStringMap(m: Record<string, string>): string {
  const sorted = Object.fromEntries(
    Object.keys(m)
      .sort()
      .map((k) => [k, m[k]]),
  );
  return JSON.stringify(sorted).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** strconv.IsPrint for U+0080..U+00FF (the only non-ASCII runes a single byte can make). */
function latin1Printable(b: number): boolean {
  return b >= 0xa1 && b !== 0xad;
}

/** encoding/json's quoteChar: how its scanner names an offending byte. */
export function goQuoteChar(b: number): string {
  if (b === 0x27) return `'\\''`;
  if (b === 0x22) return `'"'`;
  const named: Record<number, string> = { 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 0x5c: "\\\\" };
  let s: string;
  if (named[b] !== undefined) s = named[b];
  else if (b < 0x20 || b === 0x7f) s = `\\x${b.toString(16).padStart(2, "0")}`;
  else if (b < 0x80 || latin1Printable(b)) s = String.fromCharCode(b);
  else s = `\\u${b.toString(16).padStart(4, "0")}`;
  return `'${s}'`;
}

/** Second-byte ranges of multi-byte UTF-8 sequences by lead byte (Go's utf8 acceptRanges). */
function utf8Sequence(lead: number): { length: number; lo: number; hi: number } | undefined {
  if (lead >= 0xc2 && lead <= 0xdf) return { length: 2, lo: 0x80, hi: 0xbf };
  if (lead === 0xe0) return { length: 3, lo: 0xa0, hi: 0xbf };
  if (lead === 0xed) return { length: 3, lo: 0x80, hi: 0x9f };
  if (lead >= 0xe1 && lead <= 0xef) return { length: 3, lo: 0x80, hi: 0xbf };
  if (lead === 0xf0) return { length: 4, lo: 0x90, hi: 0xbf };
  if (lead >= 0xf1 && lead <= 0xf3) return { length: 4, lo: 0x80, hi: 0xbf };
  if (lead === 0xf4) return { length: 4, lo: 0x80, hi: 0x8f };
  return undefined;
}

/** Decodes UTF-8 like Go's unquote: each byte of an invalid sequence becomes one U+FFFD. */
function goDecodeUtf8(buf: Buffer): string {
  let out = "";
  let i = 0;
  while (i < buf.length) {
    const lead = buf[i];
    if (lead < 0x80) {
      out += String.fromCharCode(lead);
      i++;
      continue;
    }
    const seq = utf8Sequence(lead);
    let valid = seq !== undefined && i + seq.length <= buf.length && buf[i + 1] >= seq.lo && buf[i + 1] <= seq.hi;
    for (let k = 2; valid && seq !== undefined && k < seq.length; k++) valid = buf[i + k] >= 0x80 && buf[i + k] <= 0xbf;
    if (valid && seq !== undefined) {
      out += buf.toString("utf8", i, i + seq.length);
      i += seq.length;
    } else {
      out += "\ufffd";
      i++;
    }
  }
  return out;
}

class GoSyntaxError extends Error {}

type Kind = "object" | "array" | "string" | "number" | "bool" | "null";

/**
 * A byte-level JSON reader with the checks and messages of Go's scanner (checkValid runs over
 * the whole input before any decoding, so syntax errors win over type errors).
 */
class Reader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}

  private fail(context: string): never {
    if (this.pos >= this.buf.length) throw new GoSyntaxError("unexpected end of JSON input");
    throw new GoSyntaxError(`invalid character ${goQuoteChar(this.buf[this.pos])} ${context}`);
  }

  private skipSpace(): void {
    while (this.pos < this.buf.length && [0x20, 0x09, 0x0a, 0x0d].includes(this.buf[this.pos])) this.pos++;
  }

  private expectByte(b: number, context: string): void {
    if (this.buf[this.pos] !== b) this.fail(context);
    this.pos++;
  }

  /** Reads a whole top-level value; returns its kind and, for objects, its members in order. */
  top(): { kind: Kind; members?: Array<[string, Kind, string]> } {
    this.skipSpace();
    const kind = this.value(true);
    const members = kind === "object" ? this.members : undefined;
    this.skipSpace();
    if (this.pos < this.buf.length) this.fail("after top-level value");
    return { kind, members };
  }

  private members: Array<[string, Kind, string]> = [];
  /** The text of the string value read last (object members record it). */
  private lastString = "";

  private value(topLevel: boolean): Kind {
    const c = this.buf[this.pos];
    if (c === 0x7b) return this.object(topLevel);
    if (c === 0x5b) return this.array();
    if (c === 0x22) {
      this.lastString = this.string();
      return "string";
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      this.number();
      return "number";
    }
    if (c === 0x74) return this.literal("true", "bool");
    if (c === 0x66) return this.literal("false", "bool");
    if (c === 0x6e) return this.literal("null", "null");
    return this.fail("looking for beginning of value");
  }

  private object(record: boolean): Kind {
    this.pos++; // {
    this.skipSpace();
    if (this.buf[this.pos] === 0x7d) {
      this.pos++;
      return "object";
    }
    for (;;) {
      if (this.buf[this.pos] !== 0x22) this.fail("looking for beginning of object key string");
      const key = this.string();
      this.skipSpace();
      this.expectByte(0x3a, "after object key");
      this.skipSpace();
      const kind = this.value(false);
      if (record) {
        this.members.push([key, kind, kind === "string" ? this.lastString : ""]);
      }
      this.skipSpace();
      if (this.buf[this.pos] === 0x2c) {
        this.pos++;
        this.skipSpace();
        continue;
      }
      this.expectByte(0x7d, "after object key:value pair");
      return "object";
    }
  }

  private array(): Kind {
    this.pos++; // [
    this.skipSpace();
    if (this.buf[this.pos] === 0x5d) {
      this.pos++;
      return "array";
    }
    for (;;) {
      this.value(false);
      this.skipSpace();
      if (this.buf[this.pos] === 0x2c) {
        this.pos++;
        this.skipSpace();
        continue;
      }
      this.expectByte(0x5d, "after array element");
      return "array";
    }
  }

  /** Validates a string literal at pos and returns its decoded text. */
  private string(): string {
    const start = this.pos;
    this.pos++; // opening quote
    for (;;) {
      if (this.pos >= this.buf.length) this.fail("");
      const c = this.buf[this.pos];
      if (c === 0x22) break;
      if (c < 0x20) this.fail("in string literal");
      if (c === 0x5c) {
        this.pos++;
        const e = this.buf[this.pos];
        if (e === 0x75) {
          for (let i = 0; i < 4; i++) {
            this.pos++;
            const h = this.buf[this.pos];
            const hex = (h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66);
            if (!hex) this.fail("in \\u hexadecimal character escape");
          }
        } else if (![0x62, 0x66, 0x6e, 0x72, 0x74, 0x5c, 0x2f, 0x22].includes(e)) {
          this.fail("in string escape code");
        }
      }
      this.pos++;
    }
    this.pos++; // closing quote
    // Go turns an escaped lone surrogate into U+FFFD; JavaScript would keep it.
    const text = JSON.parse(goDecodeUtf8(this.buf.subarray(start, this.pos))) as string;
    return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
  }

  private digits(): number {
    let n = 0;
    while (this.buf[this.pos] >= 0x30 && this.buf[this.pos] <= 0x39) {
      this.pos++;
      n++;
    }
    return n;
  }

  private number(): void {
    if (this.buf[this.pos] === 0x2d) {
      this.pos++;
      const c = this.buf[this.pos];
      if (!(c >= 0x30 && c <= 0x39)) this.fail("in numeric literal");
    }
    if (this.buf[this.pos] === 0x30) this.pos++;
    else this.digits();
    if (this.buf[this.pos] === 0x2e) {
      this.pos++;
      if (this.digits() === 0) this.fail("after decimal point in numeric literal");
    }
    if (this.buf[this.pos] === 0x65 || this.buf[this.pos] === 0x45) {
      this.pos++;
      if (this.buf[this.pos] === 0x2b || this.buf[this.pos] === 0x2d) this.pos++;
      if (this.digits() === 0) this.fail("in exponent of numeric literal");
    }
  }

  private literal(word: string, kind: Kind): Kind {
    for (let i = 0; i < word.length; i++) {
      if (this.buf[this.pos] !== word.charCodeAt(i)) this.fail(`in literal ${word} (expecting '${word[i]}')`);
      this.pos++;
    }
    return kind;
  }
}

export type UnmarshalResult = { ok: true; result: Record<string, string> | null } | { ok: false; error: string };

/**
 * json.Unmarshal(output, &result) with result a map[string]string: a JSON null gives a nil map
 * (the framework turns that into a null `result`), an element null gives "", anything but an
 * object of strings fails with Go's first error.
 */
export function goJsonUnmarshalStringMap(output: Buffer | string): UnmarshalResult {
  const buf = typeof output === "string" ? Buffer.from(output, "utf8") : output;
  let top: ReturnType<Reader["top"]>;
  try {
    top = new Reader(buf).top();
  } catch (e) {
    if (e instanceof GoSyntaxError) return { ok: false, error: e.message };
    throw e;
  }
  if (top.kind === "null") return { ok: true, result: null };
  if (top.kind !== "object") return { ok: false, error: `json: cannot unmarshal ${top.kind} into Go value of type map[string]string` };
  // Null prototype: a "__proto__" key is an ordinary key, as in Go.
  const result = Object.create(null) as Record<string, string>;
  let firstError: string | undefined;
  for (const [key, kind, text] of top.members ?? []) {
    if (kind === "string") result[key] = text;
    else if (kind === "null") result[key] = "";
    // Map elements carry no field context in Go 1.23's UnmarshalTypeError.
    else firstError ??= `json: cannot unmarshal ${kind} into Go value of type string`;
  }
  if (firstError !== undefined) return { ok: false, error: firstError };
  return { ok: true, result: { ...result } };
}
