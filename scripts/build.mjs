// Bundles what tsc alone cannot deliver:
// - lib/assets/gpucloud-tf.js: the one dependency-free script that Terraform runs (copied into
//   every synthesized stack as a TerraformAsset, so the stack folder is self-contained);
// - build/: repo-only tooling (provider doubles, the demo, the example app), never published.
import { build } from "esbuild";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runtimeBundlePlugin } from "./bundle/runtime-plugin.mjs";
import toolBundle from "./tool-bundle-options.cjs";

const { toolBundleOptions } = toolBundle;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const at = (p) => path.join(root, p);

const runtime = await build({
  entryPoints: [at("src/runtime/main.ts")],
  outfile: at("lib/assets/gpucloud-tf.js"),
  bundle: true,
  platform: "node",
  target: "node20", // undici 7 needs Node >= 20.18
  format: "cjs",
  legalComments: "none",
  // Every stack folder carries a copy: drop white space, keep names for readable stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  banner: { js: "#!/usr/bin/env node\n// Bundled by cdktf-gpucloud; run by Terraform (external data source and local-exec)." },
  logLevel: "warning",
  // Terraform starts the script once per read: load only the parts of undici it uses.
  plugins: [runtimeBundlePlugin()],
  metafile: true,
});
// What the bundle is made of, for `npm run bench:script` (build/ is never published).
mkdirSync(at("build"), { recursive: true });
writeFileSync(at("build/gpucloud-tf.meta.json"), JSON.stringify(runtime.metafile));

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
