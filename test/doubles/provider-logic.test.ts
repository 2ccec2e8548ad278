// The doubles' decision logic, without gRPC or Terraform.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

import { Unknown } from "../../tools/provider-doubles/cty";
import { externalProvider, providerProcessEnv } from "../../tools/provider-doubles/external-provider";
import { lookPath } from "../../tools/provider-doubles/go-exec";
import { goJsonMarshalStringMap, goJsonUnmarshalStringMap, goQuoteChar } from "../../tools/provider-doubles/go-json";
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
    ["a wholly unknown map over a non-empty one", Unknown],
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
    expect(planNullResource(prior, { id: "42", triggers: { a: "1", b: null } })).toEqual({
      planned: { id: "42", triggers: { a: "1", b: null } },
    });
  });

  it("updates in place, like the real plan modifier, when a wholly unknown map replaces a null or empty one", () => {
    // The framework sees no elements in an unknown map, so nothing in the prior map is missing.
    expect(triggersRequireReplace(null, Unknown)).toBe(false);
    expect(triggersRequireReplace({}, Unknown)).toBe(false);
    expect(planNullResource({ id: "7", triggers: null }, { id: "7", triggers: Unknown })).toEqual({
      planned: { id: "7", triggers: Unknown },
    });
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

  it("decodes output like json.Unmarshal into map[string]string, with Go's error texts", () => {
    expect(goJsonUnmarshalStringMap('{"a":"b"}\n')).toEqual({ ok: true, result: { a: "b" } });
    // A JSON null is a nil map: the framework stores a null `result`, not an empty one.
    expect(goJsonUnmarshalStringMap("null")).toEqual({ ok: true, result: null });
    expect(goJsonUnmarshalStringMap('{"a":null}')).toEqual({ ok: true, result: { a: "" } });
    expect(goJsonUnmarshalStringMap('{"s":"\\ud83d\\ude00 \\ud800 \\u00e9"}')).toEqual({
      ok: true,
      result: { s: "\u{1f600} \ufffd \u00e9" },
    });
    // Invalid UTF-8: one U+FFFD per byte, as Go's decoder (Node's would merge a truncated sequence).
    const bytes = Buffer.concat([Buffer.from('{"s":"'), Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from('!\u00e9\u{1f600}"}')]);
    expect(goJsonUnmarshalStringMap(bytes)).toEqual({ ok: true, result: { s: "\ufffd\ufffd\ufffd!\u00e9\u{1f600}" } });
    const proto = goJsonUnmarshalStringMap('{"__proto__":"x"}');
    expect(proto.ok && Object.keys(proto.result!)).toEqual(["__proto__"]);
    const cases: Array<[string, string]> = [
      ['{"n":1}', "json: cannot unmarshal number into Go value of type string"],
      // Go reports the first bad element in document order (JavaScript would sort "2" first).
      ['{"b":1,"2":true}', "json: cannot unmarshal number into Go value of type string"],
      ['{"o":{"x":"y"}}', "json: cannot unmarshal object into Go value of type string"],
      ['["a"]', "json: cannot unmarshal array into Go value of type map[string]string"],
      ['"text"', "json: cannot unmarshal string into Go value of type map[string]string"],
      ["", "unexpected end of JSON input"],
      ["  \n", "unexpected end of JSON input"],
      ['{"a":"b"', "unexpected end of JSON input"],
      ["not json", "invalid character 'o' in literal null (expecting 'u')"],
      ["hello", "invalid character 'h' looking for beginning of value"],
      ['{"a":"b"} trailing', "invalid character 't' after top-level value"],
      ['{"a" "b"}', "invalid character '\"' after object key"],
      ['{"a":"b" "c":"d"}', "invalid character '\"' after object key:value pair"],
      ["{a:1}", "invalid character 'a' looking for beginning of object key string"],
      ['{"a":"\\q"}', "invalid character 'q' in string escape code"],
      ['{"a":"x\ty"}', "invalid character '\\t' in string literal"],
      ['{"a":01}', "invalid character '1' after object key:value pair"],
      ['{"a":1.}', "invalid character '}' after decimal point in numeric literal"],
      ["\ufeff{}", "invalid character 'ï' looking for beginning of value"],
    ];
    for (const [input, error] of cases) expect([input, goJsonUnmarshalStringMap(input)]).toEqual([input, { ok: false, error }]);
  });

  it("names bytes like encoding/json's quoteChar", () => {
    expect(goQuoteChar(0x27)).toBe("'\\''");
    expect(goQuoteChar(0x0a)).toBe("'\\n'");
    expect(goQuoteChar(0x01)).toBe("'\\x01'");
    expect(goQuoteChar(0x85)).toBe("'\\u0085'");
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
    expect(lookPath("tool", env, dir)).toEqual({ ok: true, path: path.join(bin, "tool") });
    expect(lookPath("data", env, dir)).toEqual({ ok: false, notFound: true, error: 'exec: "data": executable file not found in $PATH' });
    expect(lookPath(path.join(bin, "data"), env, dir)).toEqual({
      ok: false,
      notFound: false,
      error: `exec: "${path.join(bin, "data")}": permission denied`,
    });
    expect(lookPath("./missing", env, dir)).toEqual({
      ok: false,
      notFound: false,
      error: 'exec: "./missing": stat ./missing: no such file or directory',
    });
    // Relative names and PATH entries are checked against the given directory, and stay relative.
    expect(lookPath("./bin/tool", env, dir)).toEqual({ ok: true, path: "./bin/tool" });
    expect(lookPath("tool", { PATH: "bin" }, dir)).toEqual({ ok: true, path: "bin/tool" });
    expect(lookPath("bin", { PATH: "." }, dir)).toEqual({
      ok: false,
      notFound: true,
      error: 'exec: "bin": executable file not found in $PATH',
    });
    // An empty or missing PATH searches nothing, not even the current directory.
    for (const empty of [{ PATH: "" }, {}]) {
      expect(lookPath("tool", empty, bin)).toEqual({
        ok: false,
        notFound: true,
        error: 'exec: "tool": executable file not found in $PATH',
      });
    }
  });
});

describe("external data source read", () => {
  const ctx = { signal: new AbortController().signal, log: () => undefined };
  let dir: string;
  beforeAll(() => {
    dir = makeTempDir("external-read-");
    mkdirSync(path.join(dir, "bin"));
    mkdirSync(path.join(dir, "work"));
    writeFileSync(path.join(dir, "not-a-dir"), "");
    const script = (body: string): string => `#!${process.execPath}\n${body}\n`;
    writeFileSync(path.join(dir, "bin", "env-echo"), script("process.stdout.write(JSON.stringify(process.env));"));
    writeFileSync(path.join(dir, "bin", "print-null"), script('process.stdout.write("null");'));
    writeFileSync(path.join(dir, "work", "here"), script('process.stdout.write(JSON.stringify({ at: "work" }));'));
    for (const f of ["bin/env-echo", "bin/print-null", "work/here"]) chmodSync(path.join(dir, f), 0o755);
  });

  const read = (config: Record<string, unknown>, env: NodeJS.ProcessEnv = { PATH: path.join(dir, "bin") }) =>
    externalProvider({ cwd: dir, env }).dataSources.external.read(
      { program: null, working_dir: null, query: null, result: null, id: null, ...config } as never,
      ctx,
    );
  const detail = (res: Awaited<ReturnType<typeof read>>): string => res.diagnostics.map((d) => `${d.summary}: ${d.detail}`).join("\n");

  it("does not fall back to a shell when the program is not on PATH", async () => {
    // $SHELL names a real shell that could find `sh`; the real provider never asks it.
    const res = await read({ program: ["sh", "-c", "echo {}"] }, { PATH: path.join(dir, "bin"), SHELL: "/bin/sh" });
    expect(res.state).toBeNull();
    expect(detail(res)).toContain("External Program Lookup Failed");
    expect(detail(res)).toContain('Program: "sh"\nError: exec: "sh": executable file not found in $PATH');
  });

  it("runs a relative program path relative to working_dir, as Go's exec.Cmd does", async () => {
    // ./here exists only in work/; the lookup (Terraform's cwd) must find a file too.
    writeFileSync(path.join(dir, "here"), "#!/bin/sh\nexit 9\n");
    chmodSync(path.join(dir, "here"), 0o755);
    const res = await read({ program: ["./here"], working_dir: "work" });
    expect(res.diagnostics).toEqual([]);
    expect((res.state as { result: unknown }).result).toEqual({ at: "work" });
  });

  it("runs a program found through a relative PATH entry relative to working_dir, so it fails there", async () => {
    const res = await read({ program: ["env-echo"], working_dir: "work" }, { PATH: "bin" });
    expect(detail(res)).toContain("External Program Execution Failed");
    expect(detail(res)).toContain("Program: bin/env-echo\nState: fork/exec bin/env-echo: no such file or directory");
  });

  it("reports a working_dir that is missing or not a directory like os.StartProcess", async () => {
    expect(detail(await read({ program: ["env-echo"], working_dir: "missing" }))).toContain(
      "State: chdir missing: no such file or directory",
    );
    expect(detail(await read({ program: ["env-echo"], working_dir: "not-a-dir" }))).toContain(
      `State: fork/exec ${path.join(dir, "bin", "env-echo")}: not a directory`,
    );
  });

  it("passes Terraform's environment plus go-plugin's handshake variables", async () => {
    const res = await read({ program: ["env-echo"] }, { PATH: path.join(dir, "bin"), FROM_TERRAFORM: "yes", PLUGIN_MIN_PORT: "1" });
    expect(res.diagnostics).toEqual([]);
    const seen = (res.state as { result: Record<string, string> }).result;
    expect(seen).toMatchObject({ FROM_TERRAFORM: "yes", ...providerProcessEnv({}) });
    expect(seen.PLUGIN_MIN_PORT).toBe("10000");
    expect(seen.TF_PLUGIN_MAGIC_COOKIE).toBe("d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2");
  });

  it("stores a null result when the program prints null", async () => {
    const res = await read({ program: ["print-null"] });
    expect(res.diagnostics).toEqual([]);
    expect(res.state).toMatchObject({ result: null, id: "-" });
  });
});

describe("proto lookup", () => {
  it("finds the proto folder from the sources and from the bundle's folder", () => {
    const fromSources = findProtoDir();
    expect(fromSources).toMatch(/tools[/\\]provider-doubles$/);
    expect(findProtoDir(path.join(fromSources, "..", "..", "build", "tools"))).toBe(fromSources);
  });
});
