// The doubles' decision logic, without gRPC or Terraform.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Unknown } from "../../tools/provider-doubles/cty";
import { goJsonMarshalStringMap, lookPath, parseProgramOutput } from "../../tools/provider-doubles/external-provider";
import { planNullResource, randomId, triggersRequireReplace } from "../../tools/provider-doubles/null-provider";
import { findProtoDir } from "../../tools/provider-doubles/protocol";
import { makeTempDir, removeTempDirs } from "../support/terraform";

afterAll(() => removeTempDirs());

describe("null_resource planning", () => {
  const prior = { id: "42", triggers: { a: "1" } };

  it("plans a create with an unknown id", () => {
    expect(planNullResource(null, { id: null, triggers: { a: "1" } })).toEqual({ planned: { id: Unknown, triggers: { a: "1" } } });
  });

  it("plans no change when triggers are equal", () => {
    const res = planNullResource(prior, { id: "42", triggers: { a: "1" } });
    expect(res.planned).toEqual(prior);
    expect(res.requiresReplace).toBeUndefined();
  });

  it.each([
    ["a changed value", { a: "2" }],
    ["an added key", { a: "1", b: "x" }],
    ["a removed key", {}],
    ["an unknown value", { a: Unknown }],
    ["a wholly unknown map", Unknown],
  ])("replaces on %s", (_label, triggers) => {
    const res = planNullResource(prior, { id: "42", triggers });
    expect(res.requiresReplace).toEqual([{ steps: [{ attribute_name: "triggers" }] }]);
    expect(res.planned).toEqual({ id: Unknown, triggers });
  });

  it("tolerates null-valued keys like the real plan modifier", () => {
    expect(triggersRequireReplace({ a: "1" }, { a: "1", b: null })).toBe(false);
    expect(triggersRequireReplace(null, { b: null })).toBe(false);
    expect(triggersRequireReplace(null, { b: "x" })).toBe(true);
    // Not a replacement, but still an in-place change that keeps the id.
    expect(planNullResource(prior, { id: "42", triggers: { a: "1", b: null } })).toEqual({ planned: { id: "42", triggers: { a: "1", b: null } } });
  });

  it("draws ids like Go's rand.Int(): non-negative decimal integers", () => {
    const ids = new Set(Array.from({ length: 20 }, randomId));
    expect(ids.size).toBe(20);
    for (const id of ids) {
      expect(id).toMatch(/^\d+$/);
      expect(BigInt(id) < 2n ** 63n).toBe(true);
    }
  });
});

describe("external program helpers", () => {
  it("marshals the query like Go: sorted keys, HTML-safe escapes", () => {
    expect(goJsonMarshalStringMap({ b: "<x & y>", a: "1" })).toBe('{"a":"1","b":"\\u003cx \\u0026 y\\u003e"}');
    expect(goJsonMarshalStringMap({})).toBe("{}");
  });

  it("accepts only a JSON object of strings", () => {
    expect(parseProgramOutput('{"a":"b"}\n')).toEqual({ ok: true, result: { a: "b" } });
    expect(parseProgramOutput("null")).toEqual({ ok: true, result: {} });
    expect(parseProgramOutput('{"n":1}')).toEqual({ ok: false, error: "json: cannot unmarshal number into Go struct field .n of type string" });
    expect(parseProgramOutput('["a"]')).toEqual({ ok: false, error: "json: cannot unmarshal array into Go value of type map[string]string" });
    expect(parseProgramOutput("")).toEqual({ ok: false, error: "unexpected end of JSON input" });
    expect(parseProgramOutput("not json").ok).toBe(false);
  });

  it("looks programs up like exec.LookPath", () => {
    const dir = makeTempDir("lookpath-");
    const bin = path.join(dir, "bin");
    mkdirSync(bin);
    writeFileSync(path.join(bin, "tool"), "#!/bin/sh\n");
    chmodSync(path.join(bin, "tool"), 0o755);
    writeFileSync(path.join(bin, "data"), "");
    chmodSync(path.join(bin, "data"), 0o644);
    const env = { PATH: `/nonexistent${path.delimiter}${bin}` };
    expect(lookPath("tool", env)).toEqual({ ok: true, path: path.join(bin, "tool") });
    expect(lookPath("data", env)).toEqual({ ok: false, notFound: true, error: 'exec: "data": executable file not found in $PATH' });
    expect(lookPath(path.join(bin, "data"), env)).toEqual({ ok: false, notFound: false, error: `exec: "${path.join(bin, "data")}": permission denied` });
    expect(lookPath("./missing", env)).toEqual({ ok: false, notFound: false, error: 'exec: "./missing": stat ./missing: no such file or directory' });
  });
});

describe("proto lookup", () => {
  it("finds the proto folder from the sources and from the bundle's folder", () => {
    const fromSources = findProtoDir();
    expect(fromSources).toMatch(/tools[/\\]provider-doubles$/);
    expect(findProtoDir(path.join(fromSources, "..", "..", "build", "tools"))).toBe(fromSources);
  });
});
