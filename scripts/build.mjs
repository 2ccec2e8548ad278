// Bundles what tsc alone cannot deliver:
// - lib/assets/: the dependency-free script that Terraform runs, gpucloud-tf.js (the launcher: Node's
//   compile cache on) and gpucloud-tf-main.js (the script proper), copied into every synthesized
//   stack as one TerraformAsset so that the stack folder is self-contained;
// - build/: repo-only tooling (provider doubles, the demo, the example app), never published.
import { build } from "esbuild";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import toolBundle from "./tool-bundle-options.cjs";

const { toolBundleOptions } = toolBundle;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const at = (p) => path.join(root, p);

// Both files of the script Terraform runs: CommonJS, no comments, no white space (every stack
// folder carries a copy), names kept for readable stack traces. Plain bundles: dependencies
// through their public entry points, nothing replaced or rewritten.
const runtimeOptions = {
  bundle: true,
  platform: "node",
  target: "node22",
  format: "cjs",
  legalComments: "none",
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
};

// The folder is copied whole into every stack: nothing left from an earlier build.
rmSync(at("lib/assets"), { recursive: true, force: true });
// The script proper, loaded by the launcher after it has turned on Node's compile cache.
const runtime = await build({
  ...runtimeOptions,
  entryPoints: [at("src/runtime/main.ts")],
  outfile: at("lib/assets/gpucloud-tf-main.js"),
  metafile: true,
});
// The script sends its requests with node:http (src/client/node-http-sender.ts); undici is the
// public client's. Fail the build, not a user's plan, if an import brings it back.
const undiciInputs = Object.keys(runtime.metafile.inputs).filter((input) => /(^|\/)node_modules\/undici\//.test(input));
if (undiciInputs.length > 0) {
  throw new Error(`the runtime bundle must not carry undici (it uses node:http), but it reaches ${undiciInputs[0]}: import the client's modules directly, not src/client/index.ts`);
}
// Node decides whether a .js file is CommonJS or an ES module by the nearest package.json. In a
// stack folder the nearest one is the user's project, and with "type": "module" there the launcher
// would fail at its first require(). This one, copied with the scripts, says what they are (and
// ends Node's search up the folders at once).
writeFileSync(at("lib/assets/package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
// What the bundle is made of, for `npm run bench:script` (build/ is never published).
mkdirSync(at("build"), { recursive: true });
writeFileSync(at("build/gpucloud-tf.meta.json"), JSON.stringify(runtime.metafile));

// The file Terraform starts: turns on the compile cache, then loads the script proper.
await build({
  ...runtimeOptions,
  entryPoints: [at("src/runtime/launcher.ts")],
  outfile: at("lib/assets/gpucloud-tf.js"),
  banner: { js: "#!/usr/bin/env node\n// Bundled by cdktf-gpucloud; run by Terraform (external data source and local-exec)." },
});

// Repo tooling: dependencies stay in node_modules; the library itself is reached through
// its package name (Node resolves a package's own name through "exports").
const tools = [
  ["tools/provider-doubles/main.ts", "build/tools/provider-doubles.js"],
  ["tools/demo.ts", "build/tools/demo.js"],
  ["examples/main.ts", "build/examples/main.js"],
  ["tools/bench/script-cost.ts", "build/tools/script-cost.js"],
  ["tools/bench/plan-ratio.ts", "build/tools/bench/plan-ratio.js"],
  ["tools/bench/plan-cost.ts", "build/tools/bench/plan-cost.js"],
  ["tools/bench/apply-scale.ts", "build/tools/bench/apply-scale.js"],
  ["tools/bench/client-faults.ts", "build/tools/bench/client-faults.js"],
  ["tools/bench/fault-matrix.ts", "build/tools/bench/fault-matrix.js"],
  ["tools/bench/terraform-profile.ts", "build/tools/bench/terraform-profile.js"],
];
for (const [entry, out] of tools) {
  if (!existsSync(at(entry))) continue;
  await build(toolBundleOptions(at(entry), at(out)));
}
