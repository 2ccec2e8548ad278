/**
 * zod schemas of the API's responses (spec §2) and the types inferred from them.
 *
 * - Every object is *loose*: fields the spec does not name are kept, never rejected
 *   (forward compatibility).
 * - Fields the spec documents but its samples omit are optional: Flavor `ephemeral`,
 *   `stock_available`, `bandwidth`, `cycle` (defaults to "hourly"); API token `description`
 *   (absent or null → "") and `last_used` (returned by the list operation only). `null` in an
 *   optional field counts as absent.
 * - Required fields that are missing or mistyped fail validation; {@link formatIssues} turns
 *   the issues into `data[0].products[2].price: expected number, received string`.
 * - Token timestamps (`created_at`, `last_used`) accept any finite number: the spec gives neither
 *   unit nor epoch, so seconds, milliseconds, nanoseconds and fractions are all legal.
 * - A token list is checked item by item, and one malformed item fails the whole list with a
 *   message naming the item (index, id, name) and the field. It is never skipped: a token missing
 *   from a list could be created a second time.
 *
 * Why `zod/mini` and lazily built schemas: Terraform starts the runtime script once per read, so
 * loading and building are paid on every plan. The functional API lets the bundle keep only what
 * is used (no method-chaining classes), and each schema is built the first time something is
 * decoded with it, so a token read never builds the flavor schemas nor those it does not decode
 * with. The classic `zod` entry installed English messages on import; mini does not, so the first
 * schema built installs them unless a locale is already configured.
 *
 * This is the only file that imports zod; the rest of the client uses the `decode*` functions.
 */
import { en } from "zod/locales";
import * as z from "zod/mini";

/**
 * English issue messages (`expected number, received string`), which the messages of this
 * client quote. Left alone when the program already chose a locale.
 */
let englishChecked = false;
function useEnglishMessages(): void {
  if (englishChecked) return;
  englishChecked = true;
  if (z.config().localeError === undefined) z.config(en());
}

/**
 * A schema built on first use (then the same instance every time). Marked free of side effects
 * so that a bundle drops the schemas it never reaches.
 */
/* @__NO_SIDE_EFFECTS__ */
function lazySchema<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => {
    if (built === undefined) {
      useEnglishMessages();
      built = build();
    }
    return built;
  };
}

/** An optional field (an optional key in the inferred type) where `null` means the same as absent. */
function optional<T extends z.ZodMiniType>(schema: T) {
  return z.optional(
    z.pipe(
      z.nullish(schema),
      z.transform((v: z.output<T> | null | undefined) => (v === null ? undefined : v)),
    ),
  );
}

/** An optional field with a default for absent and `null` (a required key in the inferred type). */
function withDefault<T extends z.ZodMiniType>(schema: T, fallback: NonNullable<z.output<T>>) {
  return z.pipe(
    z.nullish(schema),
    z.transform((v: z.output<T> | null | undefined) => v ?? fallback),
  );
}

/** A safe integer (zod's `int`: no fractions, no values beyond ±2^53-1). */
const integer = () => z.int();
/** Unit and epoch not shown by the spec: any finite number (zod's number excludes NaN and ±Infinity). */
const timestamp = () => z.number();
/** A count: a safe integer, at least 0. */
const count = () => z.int().check(z.nonnegative());

// ---------------------------------------------------------------------------------------------
// Envelope (§2.1)

/** The envelope around a given `data` schema. */
export function envelopeOf<T extends z.ZodMiniType>(data: T) {
  return z.looseObject({
    status: z.boolean(),
    message: optional(z.string()),
    data,
  });
}

/** The part of the envelope common to every response. */
const envelopeBaseSchema = lazySchema(() =>
  z.looseObject({
    status: z.boolean(),
    message: optional(z.string()),
  }),
);

// ---------------------------------------------------------------------------------------------
// Login data (§2.2)

// Only the two tokens are needed to go on; username and email are informational, so a server
// that leaves them out is tolerated rather than turned into a failed login.
const loginDataSchema = lazySchema(() =>
  z.looseObject({
    username: z.optional(z.string()),
    email: z.optional(z.string()),
    access_token: z.string().check(z.minLength(1)),
    refresh_token: z.string().check(z.minLength(1)),
  }),
);
const loginResponseSchema = lazySchema(() => envelopeOf(loginDataSchema()));

// ---------------------------------------------------------------------------------------------
// Flavors (§2.3, §2.4)

const flavorSchema = lazySchema(() =>
  z.looseObject({
    id: z.string(),
    name: z.string(),
    region_name: z.string(),
    region_id: z.string(),
    price: z.number(),
    cpu: integer(),
    disk: integer(),
    ephemeral: optional(integer()),
    ram: integer(),
    gpu: z.string(),
    gpu_count: integer(),
    stock_available: optional(z.boolean()),
    bandwidth: optional(z.string()),
    cycle: withDefault(z.string(), "hourly"),
  }),
);
const flavorRegionGroupSchema = lazySchema(() =>
  z.looseObject({
    region: z.string(),
    products: z.array(flavorSchema()),
  }),
);
const flavorListResponseSchema = lazySchema(() => envelopeOf(z.array(flavorRegionGroupSchema())));

// ---------------------------------------------------------------------------------------------
// API tokens (§2.5)

const apiTokenSchema = lazySchema(() =>
  z.looseObject({
    id: z.string(),
    name: z.string(),
    description: withDefault(z.string(), ""),
    token: z.string(),
    created_at: timestamp(),
    /** Only in list responses; 0 means never used. */
    last_used: optional(timestamp()),
  }),
);
const tokenResponseSchema = lazySchema(() => envelopeOf(apiTokenSchema()));
const tokenListResponseSchema = lazySchema(() =>
  z.looseObject({
    status: z.boolean(),
    message: optional(z.string()),
    data: z.array(apiTokenSchema()),
    total: count(),
  }),
);
/** One page of the token list. */
const tokenListSchema = lazySchema(() =>
  z.object({
    tokens: z.array(apiTokenSchema()),
    total: count(),
  }),
);
/** The list response with its items unchecked, for {@link decodeTokenList}. */
const tokenListShellSchema = lazySchema(() =>
  z.looseObject({
    status: z.boolean(),
    message: optional(z.string()),
    data: z.array(z.unknown()),
    total: count(),
  }),
);

// ---------------------------------------------------------------------------------------------
// The schemas as values, for programs that validate with them directly (`.parse`, `.safeParse`).
// Each is a call marked pure, so a bundle that does not use it (the runtime script) drops the
// call and builds the schema only when a `decode*` function first needs it.

export const EnvelopeBaseSchema = /* @__PURE__ */ envelopeBaseSchema();
export const LoginDataSchema = /* @__PURE__ */ loginDataSchema();
export const LoginResponseSchema = /* @__PURE__ */ loginResponseSchema();
export const FlavorSchema = /* @__PURE__ */ flavorSchema();
export const FlavorRegionGroupSchema = /* @__PURE__ */ flavorRegionGroupSchema();
export const FlavorListResponseSchema = /* @__PURE__ */ flavorListResponseSchema();
export const ApiTokenSchema = /* @__PURE__ */ apiTokenSchema();
export const TokenResponseSchema = /* @__PURE__ */ tokenResponseSchema();
export const TokenListResponseSchema = /* @__PURE__ */ tokenListResponseSchema();
export const TokenListSchema = /* @__PURE__ */ tokenListSchema();

export type EnvelopeBase = z.infer<ReturnType<typeof envelopeBaseSchema>>;
export type LoginData = z.infer<ReturnType<typeof loginDataSchema>>;
export type Flavor = z.infer<ReturnType<typeof flavorSchema>>;
export type FlavorRegionGroup = z.infer<ReturnType<typeof flavorRegionGroupSchema>>;
export type ApiToken = z.infer<ReturnType<typeof apiTokenSchema>>;
export type TokenList = z.infer<ReturnType<typeof tokenListSchema>>;

// ---------------------------------------------------------------------------------------------
// Issue formatting

/** `["data", 0, "products", 2, "price"]` → `data[0].products[2].price`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else {
      const name = String(key);
      if (/^[A-Za-z_$][\w$]*$/.test(name)) out += out === "" ? name : `.${name}`;
      else out += `[${JSON.stringify(name)}]`;
    }
  }
  return out === "" ? "(root)" : out;
}

/** Human summary of the first few issues, e.g. `data[0].price: expected number, received string`. */
export function formatIssues(issues: ReadonlyArray<z.core.$ZodIssue>, max = 3): string {
  const parts = issues.slice(0, max).map((issue) => {
    const message = issue.message.replace(/^Invalid input:\s*/i, "");
    return `${formatPath(issue.path)}: ${message}`;
  });
  if (issues.length > max) parts.push(`and ${issues.length - max} more`);
  return parts.join("; ");
}

// ---------------------------------------------------------------------------------------------
// Decoding (the client's only entry to zod)

export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly issues: string };

/** Decodes one response; its schemas are built on first use, or earlier by `prepare`. */
export interface Decoder<T> {
  (json: unknown): Decoded<T>;
  /**
   * Builds the schemas now. Building is most of what validating a response costs in a fresh
   * process (about a millisecond for the login response, against a tenth for parsing it), so
   * the transport calls this while its request is on the wire instead of after the answer.
   */
  readonly prepare: () => void;
}

/** A decoder that builds its schema on first use. */
function decodeWith<S extends z.ZodMiniType, T>(schema: () => S, pick: (parsed: z.output<S>) => T): Decoder<T> {
  const decode = (json: unknown): Decoded<T> => {
    const result = z.safeParse(schema(), json);
    return result.success ? { ok: true, value: pick(result.data) } : { ok: false, issues: formatIssues(result.error.issues) };
  };
  return Object.assign(decode, { prepare: () => void schema() });
}

export const decodeEnvelope = decodeWith(envelopeBaseSchema, (r) => r);
export const decodeLogin = decodeWith(loginResponseSchema, (r) => r.data);
export const decodeFlavors = decodeWith(flavorListResponseSchema, (r) => r.data);
export const decodeToken = decodeWith(tokenResponseSchema, (r) => r.data);

/**
 * A page of the token list. Items are checked one by one so that a failure names the item:
 * `data[3] (id "tok_1", name "ci"): created_at: expected number, received string`.
 */
export const decodeTokenList: Decoder<TokenList> = Object.assign(decodeTokenListItems, {
  prepare: () => {
    tokenListShellSchema();
    apiTokenSchema();
  },
});

function decodeTokenListItems(json: unknown): Decoded<TokenList> {
  const shell = z.safeParse(tokenListShellSchema(), json);
  if (!shell.success) return { ok: false, issues: formatIssues(shell.error.issues) };
  const tokens: ApiToken[] = [];
  const problems: string[] = [];
  shell.data.data.forEach((item, index) => {
    const parsed = z.safeParse(apiTokenSchema(), item);
    if (parsed.success) tokens.push(parsed.data);
    else problems.push(`data[${index}]${describeItem(item)}: ${formatIssues(parsed.error.issues, 2)}`);
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, 3);
    if (problems.length > 3) shown.push(`and ${problems.length - 3} more malformed items`);
    return { ok: false, issues: shown.join("; ") };
  }
  return { ok: true, value: { tokens, total: shell.data.total } };
}

/** ` (id "…", name "…")` from whatever of the two an item has, or "". */
function describeItem(item: unknown): string {
  if (item === null || typeof item !== "object") return "";
  const record = item as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of ["id", "name"]) {
    const value = record[key];
    if (typeof value === "string" || typeof value === "number") parts.push(`${key} ${JSON.stringify(String(value).slice(0, 60))}`);
  }
  return parts.length === 0 ? "" : ` (${parts.join(", ")})`;
}
