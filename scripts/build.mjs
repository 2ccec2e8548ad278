// Bundles what tsc alone cannot deliver:
// - lib/assets/: the dependency-free script that Terraform runs, gpucloud-tf.js (the launcher) and
//   gpucloud-tf-main.js (the script proper), copied into every synthesized stack as one
//   TerraformAsset so that the stack folder is self-contained;
// - build/: repo-only tooling (provider doubles, the demo, the example app), never published.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LLHTTP_V8_FLAGS, runtimeBundlePlugin, writeLlhttpWasmFiles } from "./bundle/runtime-plugin.mjs";
import toolBundle from "./tool-bundle-options.cjs";

const { toolBundleOptions } = toolBundle;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const at = (p) => path.join(root, p);

// Both files of the script Terraform runs: Node 20 CommonJS, no comments, no white space (every
// stack folder carries a copy), names kept for readable stack traces.
const runtimeOptions = {
  bundle: true,
  platform: "node",
  target: "node20", // undici 7 needs Node >= 20.18
  format: "cjs",
  legalComments: "none",
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
};

// The script proper: one function expression, (function (exports, require, module, __filename,
// __dirname) {...}), that the launcher compiles with a V8 code cache (src/runtime/launcher.ts).
const runtime = await build({
  ...runtimeOptions,
  entryPoints: [at("src/runtime/main.ts")],
  outfile: at("lib/assets/gpucloud-tf-main.js"),
  banner: { js: "(function (exports, require, module, __filename, __dirname) {" },
  footer: { js: "})" },
  // Terraform starts the script once per read: load only the parts of undici it uses.
  plugins: [runtimeBundlePlugin()],
  metafile: true,
});
writeLlhttpWasmFiles(at("lib/assets"));
// Node decides whether a .js file is CommonJS or an ES module by the nearest package.json. In a
// stack folder the nearest one is the user's project, and with "type": "module" there the launcher
// would fail at its first require(). This one, copied with the scripts, says what they are (and
// ends Node's search up the folders at once).
writeFileSync(at("lib/assets/package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
// What the bundle is made of, for `npm run bench:script` (build/ is never published).
mkdirSync(at("build"), { recursive: true });
writeFileSync(at("build/gpucloud-tf.meta.json"), JSON.stringify(runtime.metafile));

// The file Terraform starts (compiled from source on every run: it is what reads the cache). It
// knows the script by a digest, for the names of its code caches, and the flags to set back.
const mainDigest = createHash("sha256").update(readFileSync(at("lib/assets/gpucloud-tf-main.js"))).digest("hex").slice(0, 16);
await build({
  ...runtimeOptions,
  entryPoints: [at("src/runtime/launcher.ts")],
  outfile: at("lib/assets/gpucloud-tf.js"),
  banner: { js: "#!/usr/bin/env node\n// Bundled by cdktf-gpucloud; run by Terraform (external data source and local-exec)." },
  define: {
    __GPUCLOUD_MAIN_DIGEST__: JSON.stringify(mainDigest),
    __GPUCLOUD_RESTORE_V8_FLAGS__: JSON.stringify(LLHTTP_V8_FLAGS.restore),
  },
});

// Repo tooling: dependencies stay in node_modules; the library itself is reached through
// its package name (Node resolves a package's own name through "exports").
const tools = [
  ["tools/provider-doubles/main.ts", "build/tools/provider-doubles.js"],
  ["tools/demo.ts", "build/tools/demo.js"],
  ["examples/main.ts", "build/examples/main.js"],
  ["tools/bench/script-cost.ts", "build/tools/script-cost.js"],
  ["tools/bench/plan-cost.ts", "build/tools/bench/plan-cost.js"],
  ["tools/bench/client-faults.ts", "build/tools/bench/client-faults.js"],
  ["tools/bench/fault-matrix.ts", "build/tools/bench/fault-matrix.js"],
];
for (const [entry, out] of tools) {
  if (!existsSync(at(entry))) continue;
  await build(toolBundleOptions(at(entry), at(out)));
}
