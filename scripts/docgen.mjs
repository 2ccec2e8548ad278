// The API reference, API.md, generated from the doc comments of the public construct API by
// jsii-docgen (as construct libraries publish theirs), from the assembly jsii compiles.
//
//   npm run docgen          # writes API.md
//   npm run docgen:check    # regenerates and compares: fails when API.md is not current (CI)
//
// jsii-docgen (pinned, so the same sources always give the same file) and the jsii-rosetta it
// needs are installed on first use into node_modules/.cache, like jsii; JSII_DOCGEN_BIN uses
// another. The output follows the installed cdktf and constructs (inherited members), which
// package-lock.json pins.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { compileAssembly, jsiiRange, removeWork, root, toolBinary } from "./jsii-assembly.mjs";

const DOCGEN_VERSION = "10.12.6";
const REGENERATE = "npm run docgen";
const check = process.argv.includes("--check");
const target = path.join(root, "API.md");

const docgen = toolBinary({
  tag: "docgen",
  folder: `jsii-docgen-${DOCGEN_VERSION}-rosetta-${jsiiRange.slice(1)}`,
  spec: [`jsii-docgen@${DOCGEN_VERSION}`, `jsii-rosetta@${jsiiRange}`],
  bin: "jsii-docgen",
  envVar: "JSII_DOCGEN_BIN",
});

const assembly = compileAssembly({ tag: "docgen" });
let generated;
try {
  if (!assembly.ok) {
    console.error(`${assembly.output.trimEnd()}\ndocgen: jsii rejected the public API (exit ${assembly.status}); run npm run jsii:check`);
    process.exit(1);
  }
  const out = path.join(assembly.work, "API.md");
  const res = spawnSync(docgen, ["--output", out], { cwd: assembly.work, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  if (res.status !== 0 || !existsSync(out)) {
    console.error(`docgen: jsii-docgen failed (exit ${res.status ?? res.error?.message})\n${res.stdout}${res.stderr}`);
    process.exit(1);
  }
  generated = readFileSync(out, "utf8");
} finally {
  removeWork(assembly.work);
}

if (!check) {
  writeFileSync(target, generated);
  console.log(`docgen: wrote API.md (${generated.split("\n").length} lines; ${assembly.types.length} types)`);
  process.exit(0);
}

const current = existsSync(target) ? readFileSync(target, "utf8") : "";
if (current === generated) {
  console.log(`docgen: API.md is current (${assembly.types.length} types)`);
  process.exit(0);
}
const a = current.split("\n");
const b = generated.split("\n");
let line = 0;
while (line < a.length && line < b.length && a[line] === b[line]) line++;
console.error(
  [
    current === "" ? "docgen: API.md is missing." : `docgen: API.md is not current: the doc comments or the public API changed (first difference at line ${line + 1}).`,
    ...(current === "" ? [] : [`  API.md:    ${JSON.stringify(a[line] ?? "(end of file)").slice(0, 160)}`, `  generated: ${JSON.stringify(b[line] ?? "(end of file)").slice(0, 160)}`]),
    `Run \`${REGENERATE}\` and commit API.md.`,
  ].join("\n"),
);
process.exit(1);
