/**
 * The response schemas on their own (src/client/schemas.ts): zod/mini installs no messages by
 * itself, the exported schemas are usable directly, and the documented tolerances hold.
 */
import type * as zodMini from "zod/mini";

import type * as schemasModule from "../../src/client/schemas";

// Type-only imports: erased from the compiled test, so the modules load only in the registry freshModules makes.
type SchemasModule = typeof schemasModule;
type ZodMini = typeof zodMini;

/** The schemas module and zod with a module registry of their own (zod's global config included). */
function freshModules(before?: (z: ZodMini) => void): { schemas: SchemasModule; z: ZodMini } {
  let loaded: { schemas: SchemasModule; z: ZodMini } | undefined;
  jest.isolateModules(() => {
    const z = require("zod/mini") as ZodMini;
    before?.(z);

    loaded = { schemas: require("../../src/client/schemas") as SchemasModule, z };
  });
  return loaded!;
}

const token = { id: "tok_1", name: "ci", token: "secret-value", created_at: 1700000000 };

describe("response schemas", () => {
  // zod keeps its configuration (the locale) on globalThis, shared by every copy it loads:
  // start each test from none, as a program that loads nothing else of zod does.
  beforeEach(() => {
    delete (globalThis as { __zod_globalConfig?: unknown }).__zod_globalConfig;
  });

  it("report English messages when nothing but the client loaded zod", () => {
    const { schemas, z } = freshModules();
    const decoded = schemas.decodeTokenList({ status: true, total: 1, data: [{ ...token, created_at: "yesterday" }] });
    expect(decoded).toEqual({ ok: false, issues: 'data[0] (id "tok_1", name "ci"): created_at: expected number, received string' });
    expect(z.config().localeError).toBeDefined();
  });

  it("keep a locale the program chose before", () => {
    const { schemas } = freshModules((z) => z.config({ localeError: () => "nicht gültig" }));
    expect(schemas.decodeToken({ status: true, data: { ...token, created_at: null } })).toEqual({
      ok: false,
      issues: "data.created_at: nicht gültig",
    });
  });

  it("export schemas with parse and safeParse that keep unknown fields and apply the defaults", () => {
    const { schemas } = freshModules();
    const parsed = schemas.ApiTokenSchema.parse({ ...token, description: null, last_used: null, scope: "all" });
    expect(parsed).toStrictEqual({ ...token, description: "", last_used: undefined, scope: "all" });

    const flavor = schemas.FlavorSchema.safeParse({
      id: "f",
      name: "n",
      region_name: "r",
      region_id: "R",
      price: 1.5,
      cpu: 8,
      disk: 100,
      ram: 64,
      gpu: "H100",
      gpu_count: 1,
    });
    expect(flavor.success && flavor.data.cycle).toBe("hourly");

    const fractionalCpu = schemas.FlavorSchema.safeParse({ ...(flavor.success ? flavor.data : {}), cpu: 1.5 });
    expect(fractionalCpu.success).toBe(false);
    expect(() => schemas.TokenListSchema.parse({ tokens: [], total: -1 })).toThrow(/too small/i);
  });

  it("accept any finite number as a timestamp, and nothing else", () => {
    const { schemas } = freshModules();
    for (const created_at of [1.5, 1700000000123, 1.7e18, -1, 0]) {
      expect(schemas.decodeToken({ status: true, data: { ...token, created_at } })).toMatchObject({ ok: true, value: { created_at } });
    }
    for (const created_at of [Number.NaN, Number.POSITIVE_INFINITY, "1700000000"]) {
      expect(schemas.decodeToken({ status: true, data: { ...token, created_at } }).ok).toBe(false);
    }
  });
});
