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
  created_at: integer(),
  /** Only in list responses; 0 means never used. */
  last_used: optional(integer()),
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
