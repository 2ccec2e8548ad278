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
 * This is the only file that imports zod; the rest of the client uses the `decode*` functions.
 */
import * as z from "zod";

/** An optional field (an optional key in the inferred type) where `null` means the same as absent. */
function optional<T extends z.ZodType>(schema: T) {
  return schema
    .nullish()
    .transform((v) => (v === null ? undefined : v))
    .optional();
}

/** An optional field with a default for absent and `null` (a required key in the inferred type). */
function withDefault<T extends z.ZodType>(schema: T, fallback: NonNullable<z.output<T>>) {
  return schema.nullish().transform((v) => v ?? fallback);
}

const integer = () => z.number().int();
/** Unit and epoch not shown by the spec: any finite number (zod's number excludes NaN and ±Infinity). */
const timestamp = () => z.number();

// ---------------------------------------------------------------------------------------------
// Envelope (§2.1)

/** The part of the envelope common to every response. */
export const EnvelopeBaseSchema = z.looseObject({
  status: z.boolean(),
  message: optional(z.string()),
});
export type EnvelopeBase = z.infer<typeof EnvelopeBaseSchema>;

/** The envelope around a given `data` schema. */
export function envelopeOf<T extends z.ZodType>(data: T) {
  return z.looseObject({
    status: z.boolean(),
    message: optional(z.string()),
    data,
  });
}

// ---------------------------------------------------------------------------------------------
// Login data (§2.2)

// Only the two tokens are needed to go on; username and email are informational, so a server
// that leaves them out is tolerated rather than turned into a failed login.
export const LoginDataSchema = z.looseObject({
  username: z.string().optional(),
  email: z.string().optional(),
  access_token: z.string().min(1),
  refresh_token: z.string().min(1),
});
export type LoginData = z.infer<typeof LoginDataSchema>;

// ---------------------------------------------------------------------------------------------
// Flavors (§2.3, §2.4)

export const FlavorSchema = z.looseObject({
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
export type Flavor = z.infer<typeof FlavorSchema>;

export const FlavorRegionGroupSchema = z.looseObject({
  region: z.string(),
  products: z.array(FlavorSchema),
});
export type FlavorRegionGroup = z.infer<typeof FlavorRegionGroupSchema>;

export const FlavorListResponseSchema = envelopeOf(z.array(FlavorRegionGroupSchema));

// ---------------------------------------------------------------------------------------------
// API tokens (§2.5)

export const ApiTokenSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: withDefault(z.string(), ""),
  token: z.string(),
  created_at: timestamp(),
  /** Only in list responses; 0 means never used. */
  last_used: optional(timestamp()),
});
export type ApiToken = z.infer<typeof ApiTokenSchema>;

export const TokenListResponseSchema = z.looseObject({
  status: z.boolean(),
  message: optional(z.string()),
  data: z.array(ApiTokenSchema),
  total: integer().nonnegative(),
});

/** One page of the token list. */
export const TokenListSchema = z.object({
  tokens: z.array(ApiTokenSchema),
  total: integer().nonnegative(),
});
export type TokenList = z.infer<typeof TokenListSchema>;

export const LoginResponseSchema = envelopeOf(LoginDataSchema);
export const TokenResponseSchema = envelopeOf(ApiTokenSchema);

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

function decodeWith<S extends z.ZodType, T>(schema: S, pick: (parsed: z.output<S>) => T): (json: unknown) => Decoded<T> {
  return (json) => {
    const result = schema.safeParse(json);
    return result.success ? { ok: true, value: pick(result.data) } : { ok: false, issues: formatIssues(result.error.issues) };
  };
}

export const decodeEnvelope = decodeWith(EnvelopeBaseSchema, (r) => r);
export const decodeLogin = decodeWith(LoginResponseSchema, (r) => r.data);
export const decodeFlavors = decodeWith(FlavorListResponseSchema, (r) => r.data);
export const decodeToken = decodeWith(TokenResponseSchema, (r) => r.data);

const TokenListShellSchema = z.looseObject({
  status: z.boolean(),
  message: optional(z.string()),
  data: z.array(z.unknown()),
  total: integer().nonnegative(),
});

/**
 * A page of the token list. Items are checked one by one so that a failure names the item:
 * `data[3] (id "tok_1", name "ci"): created_at: expected number, received string`.
 */
export function decodeTokenList(json: unknown): Decoded<TokenList> {
  const shell = TokenListShellSchema.safeParse(json);
  if (!shell.success) return { ok: false, issues: formatIssues(shell.error.issues) };
  const tokens: ApiToken[] = [];
  const problems: string[] = [];
  shell.data.data.forEach((item, index) => {
    const parsed = ApiTokenSchema.safeParse(item);
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
