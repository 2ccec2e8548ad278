// undici's fetch body encoder, replaced in the runtime bundle. undici's HTTP/1 client loads it
// only to send a FormData body; the client sends JSON strings, so the fetch implementation
// (FormData, Blob, streams) stays out of the bundle.
"use strict";

exports.extractBody = function extractBody() {
  throw new Error("FormData request bodies are not part of the gpucloud runtime bundle");
};
