// undici's HTTP/2 session code, replaced in the runtime bundle. undici only speaks HTTP/2 when a
// dispatcher is created with `allowH2: true` (it then offers "h2" in TLS ALPN); the client never
// sets it, so this is never called. Leaving it out saves loading node:http2 and node:tls on every
// run (http:// bases never need tls; https:// ones load it when they connect).
"use strict";

module.exports = function connectH2() {
  throw new Error("HTTP/2 is not part of the gpucloud runtime bundle (the client does not set allowH2)");
};
