import { decode, encode, ExtData } from "@msgpack/msgpack";

import {
  conform,
  containsUnknown,
  type CtyType,
  decodeMsgpack,
  encodeMsgpack,
  fromDynamicValue,
  isUnknown,
  knownEqual,
  toDynamicValue,
  Unknown,
} from "../../tools/provider-doubles/cty";

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

describe("cty msgpack codec", () => {
  it("writes an unknown the way cty does (fixext1, type 0)", () => {
    expect(hex(encodeMsgpack(Unknown))).toBe("d40000");
  });

  it("reads a plain unknown (extension type 0)", () => {
    expect(decodeMsgpack(Buffer.from("d40000", "hex"))).toBe(Unknown);
  });

  it("reads a refined unknown (extension type 12 with a map payload) as unknown", () => {
    // e.g. an unknown string known not to be null with a prefix: refinements are a msgpack map.
    const refinements = encode(
      new Map<number, unknown>([
        [1, true],
        [2, "ab"],
      ]),
    );
    const bytes = encode({ id: new ExtData(12, refinements), name: "x" });
    const v = decodeMsgpack(bytes);
    expect(v).toEqual({ id: Unknown, name: "x" });
    expect(isUnknown((v as Record<string, unknown>).id)).toBe(true);
  });

  it("treats any other extension type as unknown too", () => {
    expect(decodeMsgpack(encode([new ExtData(42, new Uint8Array([1, 2]))]))).toEqual([Unknown]);
  });

  it("round-trips nested maps, lists and unknowns inside them", () => {
    const value = { outer: { a: { b: "c" }, list: ["x", Unknown, null] }, n: 3 };
    const back = decodeMsgpack(encodeMsgpack(value));
    expect(back).toEqual(value);
    expect(containsUnknown(back)).toBe(true);
    expect(containsUnknown({ a: { b: ["c"] } })).toBe(false);
  });

  it("encodes null attributes as nil and keeps their keys", () => {
    const bytes = encodeMsgpack({ id: null, triggers: { k: null } });
    // Decode with plain msgpack to look at the raw shape: both keys present, values nil.
    expect(decode(bytes)).toEqual({ id: null, triggers: { k: null } });
    expect(hex(bytes)).toContain("c0");
  });

  it("encodes whole numbers as integers and others as float64", () => {
    expect(hex(encodeMsgpack(5))).toBe("05");
    expect(hex(encodeMsgpack(-1))).toBe("ff");
    expect(hex(encodeMsgpack(1.5))).toBe("cb3ff8000000000000");
  });

  it("decodes DynamicValue msgpack, json, and absent values", () => {
    expect(fromDynamicValue(toDynamicValue({ a: "b" }))).toEqual({ a: "b" });
    expect(fromDynamicValue({ json: Buffer.from('{"a":["b"]}') })).toEqual({ a: ["b"] });
    expect(fromDynamicValue({ msgpack: Buffer.from("c0", "hex") })).toBeNull();
    expect(fromDynamicValue(null)).toBeNull();
    expect(fromDynamicValue({ msgpack: Buffer.alloc(0), json: Buffer.alloc(0) })).toBeNull();
  });
});

describe("conform (JSON state → schema-shaped value)", () => {
  const nullResource: CtyType = ["object", { id: "string", triggers: ["map", "string"] }];

  it("adds missing attributes as null and drops unknown ones", () => {
    expect(conform(nullResource, { id: "1", legacy: "x" })).toEqual({ id: "1", triggers: null });
  });

  it("converts nested collections element-wise", () => {
    const t: CtyType = ["object", { program: ["list", "string"], result: ["map", "string"], n: "number", b: "bool" }];
    expect(conform(t, { program: ["a", 1], result: { k: "v" }, n: "2", b: "true" })).toEqual({
      program: ["a", "1"],
      result: { k: "v" },
      n: 2,
      b: true,
    });
  });

  it("rejects values of the wrong shape with a path", () => {
    expect(() => conform(nullResource, { id: "1", triggers: ["x"] })).toThrow("value.triggers: expected a map");
    expect(() => conform(["map", "string"], { a: { nested: true } })).toThrow('value["a"]: cannot use');
  });
});

describe("knownEqual", () => {
  it("compares deeply and never calls unknowns equal", () => {
    expect(knownEqual({ a: ["x"], b: null }, { b: null, a: ["x"] })).toBe(true);
    expect(knownEqual({ a: "x" }, { a: "x", b: null })).toBe(false);
    expect(knownEqual(Unknown, Unknown)).toBe(false);
    expect(knownEqual({ a: Unknown }, { a: "x" })).toBe(false);
    expect(knownEqual(null, {})).toBe(false);
  });
});
