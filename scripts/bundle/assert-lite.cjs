// `node:assert` as undici uses it inside the runtime bundle: only `assert(value[, message])`,
// for internal invariants. Loading node:assert itself costs each script run several
// milliseconds (it pulls in the diff printer, colours and stderr setup) for checks that never
// fire unless undici has a bug; the failure is the same kind of error with the same code.
"use strict";

function assert(value, message) {
  if (value) return;
  if (message instanceof Error) throw message;
  const error = new Error(message === undefined ? "assertion failed inside undici" : String(message));
  error.name = "AssertionError";
  error.code = "ERR_ASSERTION";
  throw error;
}
assert.ok = assert;

module.exports = assert;
