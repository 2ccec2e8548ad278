/**
 * HTTP for the script Terraform runs: node:http (node:https for https: URLs, loaded only then),
 * nothing else. Terraform starts the script once per read, so every module it loads is paid for
 * on every plan; node:http is part of Node and what the floor of `npm run bench:script` uses,
 * where undici (its whole public entry point, WebAssembly parser included) would make each run
 * several times slower. The public client keeps undici (./undici-sender.ts); both sit behind
 * the same transport (./transport.ts) and the client's tests run against both
 * (test/client/node-http-sender.test.ts).
 */
import * as http from "node:http";
import type * as https from "node:https";

import type { HttpRequest, HttpResponse, HttpSender, HttpSenderSettings } from "./http-sender";
import { codedError, CONNECT_TIMEOUT_CODE, RESPONSE_TOO_LARGE_CODE } from "./http-sender";

export function openNodeHttpSender(settings: HttpSenderSettings): HttpSender {
  // Kept-alive connections, at most `connections` of them per host: with 1, a request waits for
  // the connection the previous answer came on instead of opening a second one.
  const agentOptions: http.AgentOptions = { keepAlive: true, maxSockets: settings.connections ?? Infinity };
  const agents = new Map<string, http.Agent>();
  let inFlight = 0;
  let whenIdle: (() => void) | undefined;

  function moduleFor(protocol: string): { module: typeof http; agent: http.Agent } {
    const secure = protocol === "https:";
    // node:https (and node:tls under it) only for an https: URL: loading it costs every run.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for https, see above
    const module = secure ? (require("node:https") as typeof https as unknown as typeof http) : http;
    let agent = agents.get(protocol);
    if (!agent) agents.set(protocol, (agent = new module.Agent(agentOptions)));
    return { module, agent };
  }

  function send(req: HttpRequest): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      // Throws (rejecting this promise) before the request is counted: the transport's URLs parse.
      const url = new URL(req.url);
      let connectTimer: NodeJS.Timeout | undefined;
      let settled = false;
      inFlight++;
      const settle = (error: Error | undefined, response?: HttpResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        if (--inFlight === 0) whenIdle?.();
        if (error) reject(error);
        else resolve(response!);
      };
      const headers: Record<string, string> = { ...req.headers };
      if (req.body !== undefined) headers["content-length"] = String(Buffer.byteLength(req.body));
      let request: http.ClientRequest;
      try {
        const { module, agent } = moduleFor(url.protocol);
        request = module.request(url, { method: req.method, headers, agent, signal: req.signal });
      } catch (error) {
        // A request that cannot be built (a header value node:http refuses: ERR_INVALID_CHAR) is
        // never sent; it must not stay counted in flight, or close() would wait for it forever.
        settle(error as Error);
        return;
      }
      /** Ends the exchange with `error` (reported first, whatever the destroy reports after it). */
      const fail = (error: Error) => {
        settle(error);
        request.destroy(error);
      };
      request.on("error", (error) => settle(error));
      request.on("socket", (socket) => {
        // A reused connection is connected already; a new one gets the connect timeout, TLS
        // handshake included, as undici's does.
        if (!socket.connecting) return;
        connectTimer = setTimeout(
          () => fail(codedError(`connect timed out after ${settings.connectTimeoutMs} ms`, CONNECT_TIMEOUT_CODE)),
          settings.connectTimeoutMs,
        );
        socket.once(url.protocol === "https:" ? "secureConnect" : "connect", () => clearTimeout(connectTimer));
      });
      request.on("response", (response) => {
        const tooLarge = () => fail(codedError(`the response is larger than ${settings.maxResponseBytes} bytes`, RESPONSE_TOO_LARGE_CODE));
        if (Number(response.headers["content-length"]) > settings.maxResponseBytes) return tooLarge();
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > settings.maxResponseBytes) tooLarge();
          else chunks.push(chunk);
        });
        response.on("error", (error) => settle(error));
        response.on("end", () =>
          settle(undefined, { status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString("utf8") }),
        );
        // Closed before its end without an error of its own (the request's error, if any, came first).
        response.on("close", () => settle(codedError("the connection closed before the response was complete", "ECONNRESET")));
      });
      request.end(req.body);
    });
  }

  return {
    send,
    close: () =>
      new Promise<void>((resolve) => {
        const destroy = () => {
          for (const agent of agents.values()) agent.destroy();
          resolve();
        };
        if (inFlight === 0) destroy();
        else whenIdle = destroy;
      }),
  };
}
