// esbuild plugin for lib/assets/gpucloud-tf.js only: Terraform starts this script once per read,
// so everything it loads is paid for on every plan and apply. The source keeps importing the
// real packages (tests and the published client use them unchanged); only the bundle swaps in
// the smaller modules below. Each file says why its swap is safe.
//
// - "undici"                → undici-slim.mjs: Agent + request from undici's lib/ files
// - undici's client-h2.js   → undici-no-h2.cjs (no node:http2, no node:tls at start-up)
// - undici's fetch body.js  → undici-no-fetch-body.cjs (no fetch/FormData implementation)
// - node:assert in undici   → assert-lite.cjs (plain invariant checks)
// - undici's llhttp wasm    → llhttp-liftoff.cjs around it (no background optimising compile)
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const UNDICI_LIB = `${path.sep}node_modules${path.sep}undici${path.sep}lib${path.sep}`;

/** Whether a module is part of undici's own lib/ folder (what the swaps below may touch). */
const inUndici = (importer) => importer.includes(UNDICI_LIB);

export function runtimeBundlePlugin() {
  return {
    name: "gpucloud-runtime-slim",
    setup(build) {
      const swap = (filter, file, onlyInUndici = true) =>
        build.onResolve({ filter }, (args) =>
          !onlyInUndici || inUndici(args.importer) ? { path: path.join(here, file) } : undefined,
        );
      swap(/^undici$/, "undici-slim.mjs", false);
      swap(/^\.\/client-h2\.js$/, "undici-no-h2.cjs");
      swap(/^\.\.\/web\/fetch\/body\.js$/, "undici-no-fetch-body.cjs");
      swap(/^(node:)?assert$/, "assert-lite.cjs");

      // The wasm byte modules, each behind the wrapper that compiles it with Liftoff only.
      build.onResolve({ filter: /^\.\.\/llhttp\/llhttp(_simd)?-wasm\.js$/ }, (args) =>
        inUndici(args.importer)
          ? { path: path.resolve(args.resolveDir, args.path), namespace: "llhttp-liftoff" }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: "llhttp-liftoff" }, (args) => ({
        contents: readFileSync(path.join(here, "llhttp-liftoff.cjs"), "utf8").replaceAll(
          "__LLHTTP_WASM__",
          JSON.stringify(args.path),
        ),
        resolveDir: here,
        loader: "js",
      }));
    },
  };
}
