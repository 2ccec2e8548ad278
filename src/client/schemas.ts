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
 * is used (no method-chaining classes), and each group of schemas (envelope, login, tokens,
 * flavors) is built the first time it decodes something, so a token read never builds the
 * flavor schemas. The classic `zod` entry installed English messages on import; mini does not,
 * so the first schema built installs them unless a locale is already configured.
 *
 * This is the only file that imports zod; the rest of the client uses the `decode*` functions.
 */
import * as z from "zod/mini";
import { en } from "zod/locales";

/** Builds a value on first call and returns the same value afterwards. */
function once<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

/**
 * English issue messages (`expected number, received string`), which the messages of this
 * client quote. Left alone when the program already chose a locale.
 */
const useEnglishMessages = once(() => {
  if (z.config().localeError === undefined) z.config(en());
  return true;
});

/** An optional field (an optional key in the inferred type) where `null` means the same as absent. */
function optional<T extends z.ZodMiniType>(schema: T) {
  return z.optional(z.pipe(z.nullish(schema), z.transform((v: z.output<T> | null | undefined) => (v === null ? undefined : v))));
}

/** An optional field with a default for absent and `null` (a required key in the inferred type). */
function withDefault<T extends z.ZodMiniType>(schema: T, fallback: NonNullable<z.output<T>>) {
  return z.pipe(z.nullish(schema), z.transform((v: z.output<T> | null | undefined) => v ?? fallback));
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

const envelopeBaseSchema = once(() => {
  useEnglishMessages();
  return z.looseObject({
    status: z.boolean(),
    message: optional(z.string()),
  });
});

// ---------------------------------------------------------------------------------------------
// Login data (§2.2)

// Only the two tokens are needed to go on; username and email are informational, so a server
// that leaves them out is tolerated rather than turned into a failed login.
const loginSchemas = once(() => {
  useEnglishMessages();
  const data = z.looseObject({
    username: z.optional(z.string()),
    email: z.optional(z.string()),
    access_token: z.string().check(z.minLength(1)),
    refresh_token: z.string().check(z.minLength(1)),
  });
  return { data, response: envelopeOf(data) };
});

// ---------------------------------------------------------------------------------------------
// Flavors (§2.3, §2.4)

const flavorSchemas = once(() => {
  useEnglishMessages();
  const flavor = z.looseObject({
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
  });
  const regionGroup = z.looseObject({
    region: z.string(),
    products: z.array(flavor),
  });
  return { flavor, regionGroup, listResponse: envelopeOf(z.array(regionGroup)) };
});

// ---------------------------------------------------------------------------------------------
// API tokens (§2.5)

const tokenSchemas = once(() => {
  useEnglishMessages();
  const token = z.looseObject({
    id: z.string(),
    name: z.string(),
    description: withDefault(z.string(), ""),
    token: z.string(),
    created_at: timestamp(),
    /** Only in list responses; 0 means never used. */
    last_used: optional(timestamp()),
  });
  return {
    token,
    response: envelopeOf(token),
    listResponse: z.looseObject({
      status: z.boolean(),
      message: optional(z.string()),
      data: z.array(token),
      total: count(),
    }),
    /** One page of the token list. */
    list: z.object({
      tokens: z.array(token),
      total: count(),
    }),
    /** The list response with its items unchecked, for {@link decodeTokenList}. */
    listShell: z.looseObject({
      status: z.boolean(),
      message: optional(z.string()),
      data: z.array(z.unknown()),
      total: count(),
    }),
  };
});

// ---------------------------------------------------------------------------------------------
// The schemas as values, for programs that validate with them directly (`.parse`, `.safeParse`).
// Each is a call marked pure so that a bundle which does not use it (the runtime script) drops
// the call and builds the group only when a `decode*` function first needs it.

/** Calls `get`: a plain call that a bundler may drop when its result is unused. */
function built<T>(get: () => T): T {
  return get();
}

export const EnvelopeBaseSchema = /* @__PURE__ */ envelopeBaseSchema();
export const LoginDataSchema = /* @__PURE__ */ built(() => loginSchemas().data);
export const LoginResponseSchema = /* @__PURE__ */ built(() => loginSchemas().response);
export const FlavorSchema = /* @__PURE__ */ built(() => flavorSchemas().flavor);
export const FlavorRegionGroupSchema = /* @__PURE__ */ built(() => flavorSchemas().regionGroup);
export const FlavorListResponseSchema = /* @__PURE__ */ built(() => flavorSchemas().listResponse);
export const ApiTokenSchema = /* @__PURE__ */ built(() => tokenSchemas().token);
export const TokenResponseSchema = /* @__PURE__ */ built(() => tokenSchemas().response);
export const TokenListResponseSchema = /* @__PURE__ */ built(() => tokenSchemas().listResponse);
export const TokenListSchema = /* @__PURE__ */ built(() => tokenSchemas().list);

export type EnvelopeBase = z.infer<ReturnType<typeof envelopeBaseSchema>>;
export type LoginData = z.infer<ReturnType<typeof loginSchemas>["data"]>;
export type Flavor = z.infer<ReturnType<typeof flavorSchemas>["flavor"]>;
export type FlavorRegionGroup = z.infer<ReturnType<typeof flavorSchemas>["regionGroup"]>;
export type ApiToken = z.infer<ReturnType<typeof tokenSchemas>["token"]>;
export type TokenList = z.infer<ReturnType<typeof tokenSchemas>["list"]>;

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

/** A decoder that builds its schema (and those it shares a group with) on first use. */
function decodeWith<S extends z.ZodMiniType, T>(schema: () => S, pick: (parsed: z.output<S>) => T): (json: unknown) => Decoded<T> {
  return (json) => {
    const result = z.safeParse(schema(), json);
    return result.success ? { ok: true, value: pick(result.data) } : { ok: false, issues: formatIssues(result.error.issues) };
  };
}

export const decodeEnvelope = decodeWith(envelopeBaseSchema, (r) => r);
export const decodeLogin = decodeWith(() => loginSchemas().response, (r) => r.data);
export const decodeFlavors = decodeWith(() => flavorSchemas().listResponse, (r) => r.data);
export const decodeToken = decodeWith(() => tokenSchemas().response, (r) => r.data);

/**
 * A page of the token list. Items are checked one by one so that a failure names the item:
 * `data[3] (id "tok_1", name "ci"): created_at: expected number, received string`.
 */
export function decodeTokenList(json: unknown): Decoded<TokenList> {
  const schemas = tokenSchemas();
  const shell = z.safeParse(schemas.listShell, json);
  if (!shell.success) return { ok: false, issues: formatIssues(shell.error.issues) };
  const tokens: ApiToken[] = [];
  const problems: string[] = [];
  shell.data.data.forEach((item, index) => {
    const parsed = z.safeParse(schemas.token, item);
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
