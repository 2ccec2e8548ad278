// `node:http` as undici uses it inside the runtime bundle. undici speaks HTTP/1.1 itself (llhttp);
// it takes two things from node:http, and loading node:http for them costs every script run
// about a millisecond (its agent, server, outgoing-message and parser modules):
//
// - `IncomingMessage`, which undici's `util.destroy` compares a stream's constructor with, to
//   detach the socket of a node:http response it is handed. The script never loads node:http, so
//   no stream in its process can be one: a class of its own never matches, as the real one would not.
// - `maxHeaderSize`, the default limit of a response's headers when a dispatcher is created
//   without one. It is left out: the transport (src/client/transport.ts) always passes its own
//   limit, and a dispatcher created without one fails with undici's own "http.maxHeaderSize
//   invalid" error instead of running with a made-up default.
"use strict";

class IncomingMessage {}

module.exports = { IncomingMessage };
