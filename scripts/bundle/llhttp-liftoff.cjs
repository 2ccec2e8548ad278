// Stands in for undici's WebAssembly HTTP parser modules (llhttp-wasm.js, llhttp_simd-wasm.js) in
// the runtime bundle: undici passes what they export, the parser's bytes, to
// `new WebAssembly.Module` on its first connection.
//
// - The bytes come from a .wasm file beside the bundle (scripts/build.mjs writes it) instead of
//   a base64 string inside it: 145 KiB less source to read, compile and keep on every run, and
//   the parser without SIMD is read only where SIMD fails.
// - By default V8 also compiles the parser's busy functions with its optimising compiler in the
//   background, and a process cannot end before that is done: 45 to 100 ms per script run, for
//   a parser that reads a few small responses. Liftoff, the baseline compiler, is enough.
// - The parser is compiled whole (`--no-wasm-lazy-compilation`), on V8's worker threads beside
//   the main one, instead of being checked now and compiled function by function on the main
//   thread while the first response is parsed: ~0.6 ms less of each run on Node 20.
// - `--liftoff-only` and eager compilation are set only for the synchronous compile that follows
//   this require and reset right after it: V8 rejects Node's built-in code cache while flags
//   differ from the defaults, which would make every core module loaded later (node:tls on an
//   https connection, for one) compile from source. Tier-up stays off to the end of the run: V8 11 (Node 20) turns it off
//   with `--liftoff-only` and leaves it off after the reset; V8 13 (Node 24) does not, and tiers
//   up after the reset unless told, so both are turned off by name. The launcher
//   (src/runtime/launcher.ts) turns them back on before it stores its code cache at exit.
"use strict";
const { readFileSync } = require("node:fs");
const path = require("node:path");
const { setFlagsFromString } = require("node:v8");

// `__dirname` is the folder of the bundle (lib/assets/, or assets/gpucloud-runtime/<hash>/ in a stack).
const bytes = readFileSync(path.join(__dirname, __LLHTTP_WASM_FILE__));

// The flags: LLHTTP_V8_FLAGS in runtime-plugin.mjs.
setFlagsFromString(__LLHTTP_COMPILE_FLAGS__);
queueMicrotask(() => setFlagsFromString(__LLHTTP_AFTER_COMPILE_FLAGS__));

module.exports = bytes;
