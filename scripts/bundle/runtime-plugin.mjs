// esbuild plugin for lib/assets/gpucloud-tf-main.js only: Terraform starts this script once per read,
// so everything it loads is paid for on every plan and apply. The source keeps importing the
// real packages (tests and the published client use them unchanged); only the bundle swaps in
// the smaller modules below. Each file says why its swap is safe.
//
// - "undici"                → undici-slim.mjs: Agent + request from undici's lib/ files
// - undici's client-h2.js   → undici-no-h2.cjs (no node:http2, no node:tls at start-up)
// - undici's fetch body.js  → undici-no-fetch-body.cjs (no fetch/FormData implementation)
// - node:assert in undici   → assert-lite.cjs (plain invariant checks)
// - node:http in undici     → undici-no-http.cjs (undici parses HTTP itself; node:http is not loaded)
// - undici's core/tree.js   → undici-no-header-tree.cjs (no header-name tree built at start-up)
// - undici's llhttp/constants.js, as client-h1.js imports it → the tables client-h1.js reads,
//                              written out at build time (see llhttpConstantsFor)
// - undici's llhttp wasm    → llhttp-liftoff.cjs: the bytes from a file beside the bundle, compiled
//                              without the background optimising compile
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, "..", "..");
const UNDICI_LIB = `${path.sep}node_modules${path.sep}undici${path.sep}lib${path.sep}`;

/** Whether a module is part of undici's own lib/ folder (what the swaps below may touch). */
const inUndici = (importer) => importer.includes(UNDICI_LIB);

/**
 * undici's parser modules and the files beside the bundle that hold their bytes
 * (scripts/build.mjs writes them with writeLlhttpWasmFiles).
 */
const LLHTTP_WASM_FILES = {
  "llhttp_simd-wasm.js": "llhttp_simd.wasm",
  "llhttp-wasm.js": "llhttp.wasm",
};

/**
 * The V8 flags around the parser's compile (see llhttp-liftoff.cjs): set for it, set back right
 * after it (Liftoff only), and set back at the end of the run before the launcher stores its code
 * cache (tier-up, which stays off until then). One list, so that the three cannot drift apart.
 */
const LLHTTP_TIER_FLAGS = ["wasm-tier-up", "wasm-dynamic-tiering"];
export const LLHTTP_V8_FLAGS = {
  compile: ["--liftoff-only", "--no-wasm-lazy-compilation", ...LLHTTP_TIER_FLAGS.map((f) => `--no-${f}`)].join(" "),
  afterCompile: "--no-liftoff-only --wasm-lazy-compilation",
  restore: ["--no-liftoff-only", ...LLHTTP_TIER_FLAGS.map((f) => `--${f}`)].join(" "),
};

/** Writes the parsers' bytes, as undici's modules export them, into `dir`. */
export function writeLlhttpWasmFiles(dir) {
  const require = createRequire(import.meta.url);
  for (const [module, file] of Object.entries(LLHTTP_WASM_FILES)) {
    writeFileSync(path.join(dir, file), require(`undici/lib/llhttp/${module}`));
  }
}

/**
 * undici's llhttp/constants.js builds some thirty tables (methods, status codes, character
 * classes) when it loads, half a millisecond of every script run; client-h1.js, its only
 * importer in the bundle, reads two of them. This writes out, from undici's own module, every
 * table that client-h1.js names as `constants.NAME`, and fails the build if it uses the module
 * any other way (a new undici then needs a look here, not a silent gap at run time).
 */
function llhttpConstantsFor(importerPath) {
  const require = createRequire(import.meta.url);
  const importer = readFileSync(importerPath, "utf8");
  // `constants` as an identifier (not in the module's path), with the property it reads if any.
  const uses = [...importer.matchAll(/(?<![\w$./])constants\b(\.[A-Za-z_$][\w$]*)?/g)];
  const declared = /\bconst constants = require\('\.\.\/llhttp\/constants\.js'\)/.test(importer);
  // The declaration is the only use without a property.
  const bare = uses.filter((m) => m[1] === undefined).length - (declared ? 1 : 0);
  if (!declared || bare > 0) {
    throw new Error(`${importerPath}: uses undici's llhttp constants other than as constants.NAME; update llhttpConstantsFor in scripts/bundle/runtime-plugin.mjs`);
  }
  const all = require("undici/lib/llhttp/constants.js");
  const tables = {};
  for (const name of new Set(uses.filter((m) => m[1] !== undefined).map((m) => m[1].slice(1)))) {
    if (all[name] === undefined) throw new Error(`${importerPath}: constants.${name} is not in undici's llhttp/constants.js`);
    tables[name] = all[name];
  }
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(tables)), tables)) throw new Error("undici's llhttp constants are not plain data any more");
  return `"use strict";\n// Written by scripts/bundle/runtime-plugin.mjs from undici's llhttp/constants.js: the tables client-h1.js reads.\nmodule.exports = ${JSON.stringify(tables)};\n`;
}

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
      swap(/^(node:)?http$/, "undici-no-http.cjs");
      swap(/^\.\/tree(\.js)?$/, "undici-no-header-tree.cjs");

      // Namespaced modules get paths relative to the repository, so that no path of the machine
      // that built the bundle ends up in it.
      build.onResolve({ filter: /^\.\.\/llhttp\/constants\.js$/ }, (args) =>
        inUndici(args.importer) && path.basename(args.importer) === "client-h1.js"
          ? {
              path: path.relative(ROOT, path.resolve(args.resolveDir, args.path)),
              namespace: "llhttp-constants",
              pluginData: { importer: args.importer },
            }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: "llhttp-constants" }, (args) => ({
        contents: llhttpConstantsFor(args.pluginData.importer),
        loader: "js",
      }));

      // The wasm byte modules: the bytes from a file beside the bundle (see LLHTTP_WASM_FILES),
      // behind the wrapper that compiles them with Liftoff only.
      build.onResolve({ filter: /^\.\.\/llhttp\/llhttp(_simd)?-wasm\.js$/ }, (args) =>
        inUndici(args.importer)
          ? { path: path.relative(ROOT, path.resolve(args.resolveDir, args.path)), namespace: "llhttp-liftoff" }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: "llhttp-liftoff" }, (args) => ({
        contents: readFileSync(path.join(here, "llhttp-liftoff.cjs"), "utf8")
          .replaceAll("__LLHTTP_WASM_FILE__", JSON.stringify(LLHTTP_WASM_FILES[path.basename(args.path)]))
          .replaceAll("__LLHTTP_COMPILE_FLAGS__", JSON.stringify(LLHTTP_V8_FLAGS.compile))
          .replaceAll("__LLHTTP_AFTER_COMPILE_FLAGS__", JSON.stringify(LLHTTP_V8_FLAGS.afterCompile)),
        resolveDir: here,
        loader: "js",
      }));
    },
  };
}
