// undici's table of well-known header names (lib/core/tree.js), replaced in the runtime bundle.
// undici builds a ternary search tree of about ninety names, character by character, when it
// loads: half a millisecond of every script run, spent to find the lower-case form of a
// response header's name without decoding its bytes. With `lookup` finding nothing, undici takes
// its own fallback for unknown names, `name.toString("latin1").toLowerCase()`, which gives the
// same string for every header name; a script run reads a handful of headers.
"use strict";

module.exports = {
  tree: {
    lookup() {
      return null;
    },
  },
  get TernarySearchTree() {
    throw new Error("undici's TernarySearchTree is not part of the gpucloud runtime bundle (scripts/bundle/undici-no-header-tree.cjs)");
  },
};
