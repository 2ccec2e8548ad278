// `node:http` as undici uses it inside the runtime bundle. undici speaks HTTP/1.1 itself (llhttp);
// it takes two things from node:http, and loading node:http for them costs every script run
// about a millisecond (its agent, server, outgoing-message and parser modules):
//
// - `IncomingMessage`, which undici's `util.destroy` compares a stream's constructor with, to
//   detach the socket of a node:http response it is handed. The script never loads node:http, so
//   no stream in its process can be one: a class of its own never matches, as the real one would not.
// - `maxHeaderSize`, the limit of a response's headers: node:http reads it from the
//   `--max-http-header-size` option (default 16 KiB). So does this, from the command line and
//   NODE_OPTIONS, where Node takes its options from.
"use strict";

const DEFAULT_MAX_HEADER_SIZE = 16 * 1024;

function maxHeaderSize() {
  let size = DEFAULT_MAX_HEADER_SIZE;
  // NODE_OPTIONS first: the command line wins over it, as in Node.
  const sources = [process.env.NODE_OPTIONS ?? "", process.execArgv.join(" ")];
  for (const text of sources) {
    for (const match of text.matchAll(/(?:^|\s)--max-http-header-size(?:=|\s+)(\d+)(?=\s|$)/g)) size = Number(match[1]);
  }
  return size;
}

class IncomingMessage {}

module.exports = { IncomingMessage, maxHeaderSize: maxHeaderSize() };
