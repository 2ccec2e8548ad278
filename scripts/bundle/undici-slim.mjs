// What `import ... from "undici"` resolves to in lib/assets/gpucloud-tf.js (see scripts/build.mjs).
//
// undici's index loads every feature at once (fetch, WebSocket, EventSource, mock agents, cache
// stores, SQLite) and creates a global Agent; the script uses one Agent and `request`. Loading
// only those two from undici's own lib/ files (undici has no "exports" map, so deep paths are
// part of what it publishes) keeps the same code on the request path and drops the rest.
//
// This is an ES module on purpose: a source file that imports any other name from "undici" makes
// the bundle build fail ("No matching export") instead of finding undefined at run time. Add the
// name here, from undici's lib/, when the client starts to need it.
import Agent from "undici/lib/dispatcher/agent.js";
import Dispatcher from "undici/lib/dispatcher/dispatcher.js";
import apiRequest from "undici/lib/api/api-request.js";
import errors from "undici/lib/core/errors.js";

// `agent.request(...)`, as undici's index installs it.
if (typeof Dispatcher.prototype.request !== "function") Dispatcher.prototype.request = apiRequest;

const { InvalidArgumentError } = errors;

export { Agent, errors };

/**
 * undici's top-level `request(url, options)` for what the client passes: an absolute URL and an
 * explicit `dispatcher` (there is no global one in this bundle).
 */
export function request(url, options = {}) {
  const { dispatcher } = options;
  if (!dispatcher) throw new InvalidArgumentError("this bundle of undici needs an explicit options.dispatcher");
  if (options.path != null) throw new InvalidArgumentError("this bundle of undici takes the path in the URL, not options.path");
  const target = url instanceof URL ? url : new URL(String(url));
  return apiRequest.call(dispatcher, {
    ...options,
    origin: target.origin,
    path: `${target.pathname}${target.search}`,
    method: options.method || (options.body ? "PUT" : "GET"),
  });
}
