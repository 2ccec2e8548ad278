// Wraps undici's WebAssembly HTTP parser (the bytes it passes to `new WebAssembly.Module` on the
// first connection) in the runtime bundle; the build puts the original module's path into the
// require at the end.
//
// By default V8 also compiles the whole parser with its optimising compiler in the background,
// and a process cannot end before that is done: about 100 ms per script run, for a parser that
// reads a few small responses. Liftoff, the baseline compiler, is enough. The flag is set only
// for the synchronous compile that follows this require and reset right after it: V8 rejects
// Node's built-in code cache while flags differ from the defaults, which would make every core
// module loaded later (node:tls on an https connection, for one) compile from source.
"use strict";
const { setFlagsFromString } = require("node:v8");

setFlagsFromString("--liftoff-only");
queueMicrotask(() => setFlagsFromString("--no-liftoff-only"));

module.exports = require(__LLHTTP_WASM__);
