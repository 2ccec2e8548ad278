// cty values as Terraform puts them on the wire (msgpack inside DynamicValue), for the handful
// of types the doubles need: primitives, lists, sets, maps and objects.
//
// Wire rules (from Terraform's object-wire-format notes and cty's msgpack encoder):
// - null is msgpack nil, also for a whole object;
// - numbers are integers when whole, float64 otherwise;
// - objects and maps are msgpack maps, lists/sets/tuples are arrays;
// - an unknown value is an extension: type 0 for a plain unknown, type 12 (with a map payload
//   of refinements) for a refined one. Any extension is read as unknown; refinements are
//   dropped, which is allowed (a provider may always answer less precisely).
// Values of dynamically-typed attributes ([typeJSON, value] pairs) are not supported because
// no double has such an attribute.
import { decode, encode, ExtData, ExtensionCodec } from "@msgpack/msgpack";

/** The one unknown value; compare with `isUnknown` or `=== Unknown`. */
export class UnknownValue {
  static readonly instance = new UnknownValue();
  private constructor() {
    Object.freeze(this);
  }
  toString(): string {
    return "(known after apply)";
  }
  toJSON(): string {
    return "<unknown>";
  }
}
export const Unknown: UnknownValue = UnknownValue.instance;

export type CtyValue = null | string | number | boolean | UnknownValue | CtyValue[] | CtyObject;
export interface CtyObject {
  [key: string]: CtyValue;
}

export function isUnknown(v: unknown): v is UnknownValue {
  return v === Unknown;
}

export function isObject(v: CtyValue | undefined): v is CtyObject {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !isUnknown(v);
}

/** cty type in its JSON form, as carried by schema attributes. */
export type CtyType =
  "string" | "number" | "bool" | ["list", CtyType] | ["set", CtyType] | ["map", CtyType] | ["object", { [attr: string]: CtyType }];

// cty writes an unknown as fixext1 type 0 with a zero payload byte (d4 00 00); do the same.
const UNKNOWN_EXT_TYPE = 0;
const codec = new ExtensionCodec();
codec.register({
  type: UNKNOWN_EXT_TYPE,
  encode: (input: unknown) => (isUnknown(input) ? new Uint8Array([0]) : null),
  decode: () => Unknown,
});

export function encodeMsgpack(value: CtyValue): Uint8Array {
  return encode(value, { extensionCodec: codec });
}

export function decodeMsgpack(bytes: Uint8Array): CtyValue {
  return normalize(decode(bytes, { extensionCodec: codec }));
}

// Turns every remaining extension (refined unknowns, future kinds) into Unknown and checks
// that nothing else unexpected (binary, Date) slipped through.
function normalize(raw: unknown): CtyValue {
  if (raw === null || raw === undefined) return null;
  if (raw instanceof ExtData || isUnknown(raw)) return Unknown;
  switch (typeof raw) {
    case "string":
    case "number":
    case "boolean":
      return raw;
    case "bigint":
      // Only produced for 64-bit integers out of double range; cty numbers are arbitrary
      // precision, but the doubles never deal in such numbers.
      return Number(raw);
    default:
      break;
  }
  if (Array.isArray(raw)) return raw.map(normalize);
  if (raw instanceof Map) {
    const out: CtyObject = {};
    for (const [k, v] of raw) out[String(k)] = normalize(v);
    return out;
  }
  if (typeof raw === "object" && Object.getPrototypeOf(raw) === Object.prototype) {
    const out: CtyObject = {};
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) out[k] = normalize(v);
    return out;
  }
  throw new Error(`unexpected msgpack value in a cty payload: ${Object.prototype.toString.call(raw)}`);
}

/** The two encodings a DynamicValue may carry. */
export interface DynamicValueMessage {
  msgpack?: Uint8Array | null;
  json?: Uint8Array | null;
}

/** Decodes a DynamicValue; an absent or empty one is null. */
export function fromDynamicValue(dv: DynamicValueMessage | null | undefined): CtyValue {
  if (!dv) return null;
  if (dv.msgpack && dv.msgpack.length > 0) return decodeMsgpack(dv.msgpack);
  if (dv.json && dv.json.length > 0) return normalize(JSON.parse(Buffer.from(dv.json).toString("utf8")));
  return null;
}

/** Encodes a value as a DynamicValue (always msgpack, never json). */
export function toDynamicValue(value: CtyValue): { msgpack: Buffer } {
  return { msgpack: Buffer.from(encodeMsgpack(value)) };
}

/**
 * Makes `value` conform to `type`: objects get every attribute (missing ones null, extra ones
 * dropped), collections are converted element-wise. Used to turn JSON state (which may omit
 * attributes added since it was written) into a value Terraform accepts for the schema.
 * Throws on values that cannot be converted.
 */
export function conform(type: CtyType, value: unknown, path = "value"): CtyValue {
  if (value === null || value === undefined) return null;
  if (isUnknown(value)) return Unknown;
  if (typeof type === "string") {
    switch (type) {
      case "string":
        if (typeof value === "string") return value;
        // cty converts numbers and bools to strings; JSON state never needs it, configs might.
        if (typeof value === "number" || typeof value === "boolean") return String(value);
        break;
      case "number":
        if (typeof value === "number") return value;
        if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
        break;
      case "bool":
        if (typeof value === "boolean") return value;
        if (value === "true" || value === "false") return value === "true";
        break;
    }
    throw new Error(`${path}: cannot use ${JSON.stringify(value)} as ${type}`);
  }
  const [kind, inner] = type;
  switch (kind) {
    case "list":
    case "set":
      if (!Array.isArray(value)) throw new Error(`${path}: expected a ${kind}`);
      return value.map((v, i) => conform(inner, v, `${path}[${i}]`));
    case "map": {
      if (typeof value !== "object" || Array.isArray(value)) throw new Error(`${path}: expected a map`);
      const out: CtyObject = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = conform(inner, v, `${path}[${JSON.stringify(k)}]`);
      return out;
    }
    case "object": {
      if (typeof value !== "object" || Array.isArray(value)) throw new Error(`${path}: expected an object`);
      const src = value as Record<string, unknown>;
      const out: CtyObject = {};
      for (const [attr, attrType] of Object.entries(inner)) out[attr] = conform(attrType, src[attr], `${path}.${attr}`);
      return out;
    }
  }
}

/**
 * True when both values are known and equal. Unknown is not equal to anything (not even
 * itself) because a comparison involving it cannot be decided at plan time.
 */
export function knownEqual(a: CtyValue, b: CtyValue): boolean {
  if (isUnknown(a) || isUnknown(b)) return false;
  if (a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => knownEqual(v, b[i]));
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && knownEqual(a[k], b[k]));
  }
  return a === b;
}

/** True when the value is, or contains, an unknown. */
export function containsUnknown(v: CtyValue): boolean {
  if (isUnknown(v)) return true;
  if (Array.isArray(v)) return v.some(containsUnknown);
  if (isObject(v)) return Object.values(v).some(containsUnknown);
  return false;
}
