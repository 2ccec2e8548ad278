/**
 * HttpTransport on its own, over loopback: what it does around one exchange that the client's
 * tests cannot see.
 */
import { Redactor } from "../../src/client";
import type { HttpResponse, OpenHttpSender } from "../../src/client/http-sender";
import { DEADLINE_CODE } from "../../src/client/retry";
import type { Decoder } from "../../src/client/schemas";
import { HttpTransport } from "../../src/client/transport";
import { closeAfterEach, fileSender, ok, pacerOnFakeClock, startStub, track } from "./helpers";

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

describe("the pace around each exchange", () => {
  /** A transport over a scripted sender: each request gets what `answer` says, on a fake clock that the pacer's waits move on. */
  function paced(answer: (path: string) => Promise<HttpResponse>) {
    const { pacer, clock, sleeps } = pacerOnFakeClock(1_000_000);
    const sent: string[] = [];
    const sender: OpenHttpSender = () => ({
      send: (req) => {
        const path = new URL(req.url).pathname;
        sent.push(path);
        return answer(path);
      },
      close: async () => {},
    });
    const http = new HttpTransport(
      {
        baseUrl: "http://api.test",
        connectTimeoutMs: 2000,
        requestTimeoutMs: 2000,
        userAgent: "transport-test",
        redactor: new Redactor(),
        now: () => clock.now,
        authDetail: (_call, how) => how,
        pacer,
      },
      sender,
    );
    const decode: Decoder<unknown> = Object.assign((json: unknown) => ({ ok: true as const, value: json }), { prepare: () => {} });
    const call = (path: string, isLogin = false) =>
      http.exchange({ operation: `test (GET ${path})`, method: "GET", path, decode, isLogin }, {}, clock.now + 60_000);
    return { clock, sleeps, sent, call, pacer };
  }
  const json = (status: number, body: unknown): Promise<HttpResponse> =>
    Promise.resolve({ status, headers: { "content-type": "application/json" }, text: JSON.stringify(body) });
  const okBody = { status: true, message: "ok", data: {} };

  const slowDown = () => json(429, { status: false, message: "slow down", data: null });

  /**
   * paced(), taught a pace of `pace` a second: that many requests accepted, the next refused by `refusal`;
   * `other` answers the other paths (an empty success where it says nothing).
   */
  async function pacedAt(pace: number, refusal = slowDown, other: (path: string) => Promise<HttpResponse> | undefined = () => undefined) {
    let n = 0;
    const t = paced((path) => (path === "/learn" && ++n === pace + 1 ? refusal() : (other(path) ?? json(200, okBody))));
    for (let i = 0; i < pace; i++) await t.call("/learn");
    await expect(t.call("/learn")).rejects.toMatchObject({ kind: "rate-limited" });
    return t;
  }

  test("after a 429, a request waits until a second after the answers that fill the window, the refused one's included", async () => {
    const t = await pacedAt(2);
    await t.call("/a");
    expect(t.sleeps).toEqual([1_000]);
    await t.call("/b");
    expect(t.sleeps).toEqual([1_000]);
  });

  test("a status false that says rate limit teaches the pace as a 429 does", async () => {
    const t = await pacedAt(2, () => json(200, { status: false, message: "rate limit exceeded", data: null }));
    await t.call("/a");
    await t.call("/b");
    expect(t.sleeps).toHaveLength(1);
  });

  test("a login takes a place, and waits for one like any request", async () => {
    const t = await pacedAt(2);
    await t.call("/authenticate/login", true);
    expect(t.sleeps).toHaveLength(1);
  });

  test("a request that fails on the way gives its place back a second after", async () => {
    const t = await pacedAt(2, slowDown, (path) =>
      path === "/broken" ? Promise.reject(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })) : undefined,
    );
    t.clock.now += 5_000;
    await expect(t.call("/broken")).rejects.toMatchObject({ kind: "network" });
    await t.call("/a");
    expect(t.sleeps).toEqual([]);
    await t.call("/b");
    expect(t.sleeps).toEqual([1_000]);
    // The failed request's place went with the second; a place it kept would make this one wait too.
    await t.call("/c");
    expect(t.sleeps).toEqual([1_000]);
  });

  test("a wait for a place held by requests in flight that outlasts the deadline ends in the deadline error, nothing sent", async () => {
    let answerHeld: (() => void) | undefined;
    const t = await pacedAt(1, slowDown, (path) =>
      path === "/slow" ? new Promise<HttpResponse>((resolve) => (answerHeld = () => void json(200, okBody).then(resolve))) : undefined,
    );
    t.clock.now += 5_000;
    const slow = t.call("/slow");
    await new Promise((resolve) => setImmediate(resolve));
    const waiting = t.call("/late").catch((e: unknown) => e);
    await new Promise((resolve) => setImmediate(resolve));
    t.clock.now += 120_000;
    answerHeld?.();
    await slow;
    expect(await waiting).toMatchObject({ kind: "timeout", code: DEADLINE_CODE });
    expect(t.sent).not.toContain("/late");
    // Its place was given back: the next request waits only for the slow one's.
    await t.call("/c");
    expect(t.sleeps).toEqual([1_000]);
  });
});
