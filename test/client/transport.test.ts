/**
 * HttpTransport on its own, over loopback: what it does around one exchange that the client's
 * tests cannot see.
 */
import { Redactor } from "../../src/client";
import type { Decoder } from "../../src/client/schemas";
import { HttpTransport } from "../../src/client/transport";
import { closeAfterEach, fileSender, ok, startStub, track } from "./helpers";

closeAfterEach();

function transport(baseUrl: string): HttpTransport {
  return new HttpTransport(
    {
      baseUrl,
      connectTimeoutMs: 2000,
      requestTimeoutMs: 2000,
      userAgent: "transport-test",
      redactor: new Redactor(),
      now: Date.now,
      authDetail: (_call, how) => how,
    },
    fileSender(),
  );
}

test("the answer's decoder is prepared while the request is on the wire, before the answer arrives", async () => {
  const events: string[] = [];
  const server = track(
    await startStub((_req, res) => {
      events.push("request received");
      setTimeout(() => {
        events.push("answer sent");
        ok(res, { value: 1 });
      }, 100);
    }),
  );
  const decode: Decoder<unknown> = Object.assign((json: unknown) => ({ ok: true as const, value: json }), {
    prepare: () => {
      events.push("decoder prepared");
    },
  });
  const http = transport(server.url);
  try {
    await http.exchange({ operation: "test (GET /thing)", method: "GET", path: "/thing", decode }, {}, Date.now() + 5000);
  } finally {
    await http.close();
  }
  // Whether the server sees the request before or after the prepare step is up to the event
  // loop; that it happens once and before the answer is the point.
  expect(events.filter((e) => e === "decoder prepared")).toHaveLength(1);
  expect(events.indexOf("decoder prepared")).toBeLessThan(events.indexOf("answer sent"));
});
