/**
 * The public client's HTTP: undici, through its public entry point. The only file that imports
 * undici (the script Terraform runs uses ./node-http-sender.ts and carries none of it).
 */
import { Agent, request } from "undici";

import type { HttpRequest, HttpResponse, HttpSender, HttpSenderSettings } from "./http-sender";

export function openUndiciSender(settings: HttpSenderSettings): HttpSender {
  const agent = new Agent({
    // With one connection, a request sent in the tick the previous answer ended waits for that
    // tick and reuses the connection instead of opening a second one. Like any reuse, it meets a
    // server that closes a kept-alive connection without saying so as a reset (an ambiguous
    // outcome for a create).
    ...(settings.connections !== undefined ? { connections: settings.connections } : {}),
    connect: { timeout: settings.connectTimeoutMs },
    headersTimeout: settings.requestTimeoutMs,
    bodyTimeout: settings.requestTimeoutMs,
    maxResponseSize: settings.maxResponseBytes,
  });
  return {
    async send(req: HttpRequest): Promise<HttpResponse> {
      const response = await request(req.url, {
        dispatcher: agent,
        method: req.method as "GET",
        headers: req.headers,
        body: req.body,
        signal: req.signal,
      });
      const text = await response.body.text();
      return { status: response.statusCode, headers: response.headers, text };
    },
    // undici's close() lets requests in flight finish.
    close: () => agent.close(),
  };
}
