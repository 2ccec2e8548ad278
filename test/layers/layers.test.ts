/**
 * The layer rules of .dependency-cruiser.cjs (run on src/ by `npm run lint:layers` in pretest):
 * src/ keeps them, and each rule fires on a fixture tree that breaks it, naming the file.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const repo = path.resolve(__dirname, "../..");
const depcruise = path.join(repo, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");
const config = path.join(repo, ".dependency-cruiser.cjs");

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/** The violations, as JSON (dependency-cruiser exits 0 with that output type). */
function cruise(cwd: string): Violation[] {
  const res = spawnSync(process.execPath, [depcruise, "src", "--config", config, "--output-type", "json"], { cwd, encoding: "utf8" });
  if (res.status !== 0) throw new Error(`dependency-cruiser failed: ${res.stderr}`);
  return (JSON.parse(res.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

/** The run `npm run lint:layers` makes (its default output): the exit status and what it prints. */
function lint(cwd: string): { status: number | null; output: string } {
  const res = spawnSync(process.execPath, [depcruise, "src", "--config", config], { cwd, encoding: "utf8" });
  return { status: res.status, output: res.stdout + res.stderr };
}

test("src/ keeps every layer rule", () => {
  expect(cruise(repo).map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
});

describe("each rule fires on an import that breaks it", () => {
  let dir: string;
  let violations: Violation[];

  // One fixture tree, one cruise (about 2 s): each file below breaks one rule, except the ones
  // named ok-*, which use the door the rules leave open.
  const files: Record<string, string> = {
    "src/protocol/index.ts": 'export * from "./token-name";\nexport const P = 1;\n',
    "src/protocol/token-name.ts": "export const F = 1;\n",
    "src/runtime/main.ts": "export const M = 1;\n",
    "src/client/index.ts": "export const C = 1;\n",
    "src/shared/config.ts": 'import { P } from "../protocol";\nexport const S = P;\n',
    "src/constructs/ok-protocol.ts": 'import { P } from "../protocol";\nimport { App } from "cdktf";\nexport const x = [P, App];\n',
    "src/constructs/bad-runtime.ts": 'import { M } from "../runtime/main";\nexport const x = M;\n',
    "src/constructs/bad-client.ts": 'import { C } from "../client";\nexport const x = C;\n',
    "src/client/bad-cdktf.ts": 'import { App } from "cdktf";\nexport const x = App;\n',
    "src/client/bad-constructs-type.ts": 'import type { Construct } from "constructs";\nexport type X = Construct;\n',
    "src/client/bad-runtime.ts": 'import { M } from "../runtime/main";\nexport const x = M;\n',
    "src/client/bad-protocol.ts": 'import { P } from "../protocol";\nexport const x = P;\n',
    "src/client/ok-token-name.ts": 'import { F } from "../protocol/token-name";\nexport const x = F;\n',
    "src/runtime/ok-protocol.ts": 'import { P } from "../protocol";\nexport const x = P;\n',
    "src/emulator/ok-node.ts": 'import { createServer } from "node:http";\nexport const x = createServer;\n',
    "src/emulator/bad-client.ts": 'import { C } from "../client";\nexport const x = C;\n',
    "src/emulator/bad-npm.ts": 'import { z } from "zod";\nexport const x = z;\n',
    "src/runtime/bad-cdktf.ts": 'import { Fn } from "cdktf";\nexport const x = Fn;\n',
    "src/runtime/bad-constructs.ts": 'import { x as y } from "../constructs/ok-protocol";\nexport const x = y;\n',
    "src/cli/ok.ts":
      'import { S } from "../shared/config";\nimport { P } from "../protocol";\nimport { C } from "../client";\nexport const x = [S, P, C];\n',
    "src/cli/bad-runtime.ts": 'import { M } from "../runtime/main";\nexport const x = M;\n',
    "src/shared/bad-runtime.ts": 'import { M } from "../runtime/main";\nexport const x = M;\n',
    "src/runtime/bad-protocol-import.ts": "export {};\n",
    "src/protocol/bad-import.ts": 'import {} from "../runtime/bad-protocol-import";\nexport {};\n',
    "src/protocol/bad-node.ts": 'import { readFileSync } from "node:fs";\nexport const x = readFileSync;\n',
    "src/cycle/a.ts": 'import { b } from "./b";\nexport const a = () => b;\n',
    "src/cycle/b.ts": 'import { a } from "./a";\nexport const b = () => a;\n',
    "src/cycle/ok-type-a.ts": 'import type { B } from "./ok-type-b";\nexport interface A { b?: B }\n',
    "src/cycle/ok-type-b.ts": 'import { type A } from "./ok-type-a";\nexport interface B { a?: A }\nexport const unused = 1;\n',
    "src/bad-tools.ts": 'import { T } from "../tools/helper";\nexport const x = T;\n',
    "src/bad-unresolved.ts": 'import { Q } from "./no-such-module";\nexport const x = Q;\n',
    "tools/helper.ts": "export const T = 1;\n",
  };
  const expected: [string, string][] = [
    ["src/constructs/bad-runtime.ts", "constructs-not-runtime"],
    ["src/constructs/bad-client.ts", "constructs-no-client-shared-cli-emulator"],
    ["src/client/bad-cdktf.ts", "client-nothing-of-cdk"],
    ["src/client/bad-constructs-type.ts", "client-nothing-of-cdk"],
    ["src/client/bad-runtime.ts", "client-no-other-layer"],
    ["src/client/bad-protocol.ts", "client-no-other-layer"],
    ["src/emulator/bad-client.ts", "emulator-node-built-ins-only"],
    ["src/emulator/bad-npm.ts", "emulator-node-built-ins-only"],
    ["src/runtime/bad-cdktf.ts", "runtime-shared-cli-no-cdk"],
    ["src/runtime/bad-constructs.ts", "runtime-no-constructs-cli-emulator"],
    ["src/cli/bad-runtime.ts", "shared-and-cli-not-runtime"],
    ["src/shared/bad-runtime.ts", "shared-and-cli-not-runtime"],
    ["src/protocol/bad-import.ts", "protocol-imports-nothing"],
    ["src/protocol/bad-node.ts", "protocol-imports-nothing"],
    ["src/cycle/a.ts", "src-no-import-cycles"],
    ["src/bad-tools.ts", "src-not-repo-tooling"],
    ["src/bad-unresolved.ts", "src-resolvable"],
  ];

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "layers-"));
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), text);
    }
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { module: "node16", moduleResolution: "node16", strict: true }, include: ["src/**/*.ts"] }),
    );
    symlinkSync(path.join(repo, "node_modules"), path.join(dir, "node_modules"), "dir");
    violations = cruise(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("the lint run fails, naming the rule and both files", () => {
    const res = lint(dir);
    expect(res.status).not.toBe(0);
    expect(res.output).toMatch(/constructs-not-runtime: src\/constructs\/bad-runtime\.ts → src\/runtime\/main\.ts/);
  });

  test.each(expected)("%s breaks %s", (from, rule) => {
    expect(violations.filter((v) => v.from === from).map((v) => v.rule.name)).toContain(rule);
  });

  test("the doors the rules leave open stay open", () => {
    const flagged = violations.filter((v) => /\/ok-|^src\/shared\/config\.ts$/.test(v.from));
    expect(flagged.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
  });

  test("nothing else is flagged", () => {
    const known = new Set(expected.map(([from, rule]) => `${from} ${rule}`));
    // A cycle is reported once per module on it.
    known.add("src/cycle/b.ts src-no-import-cycles");
    expect(violations.map((v) => `${v.from} ${v.rule.name}`).filter((k) => !known.has(k))).toEqual([]);
  });
});
