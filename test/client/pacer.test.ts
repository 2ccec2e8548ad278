/**
 * RequestPacer on a clock of its own: what it learns from the first refusal and how many requests
 * it lets go in a window after.
 */
import type { Place, RequestPacer } from "../../src/client/pacer";
import { pacerOnFakeClock } from "./helpers";

const pacer = () => pacerOnFakeClock();

/** How many of `n` requests sent one after another at the clock's time go without waiting. */
async function unpacedOf(p: RequestPacer, sleeps: number[], n: number): Promise<number> {
  const before = sleeps.length;
  let unpaced = 0;
  for (let i = 0; i < n; i++) {
    p.answered(await p.slot(Number.POSITIVE_INFINITY), "accepted");
    if (sleeps.length === before) unpaced++;
  }
  return unpaced;
}

/** Twenty requests sent side by side, then a twenty-first the server refuses; `answeredFirst` of the twenty are answered before the refusal. */
async function burstWithRefusal(answeredFirst: number): Promise<{ p: RequestPacer; clock: { now: number }; sleeps: number[] }> {
  const { pacer: p, clock, sleeps } = pacer();
  const places: Place[] = [];
  for (let i = 0; i < 20; i++) {
    clock.now = i * 3;
    places.push(await p.slot(Number.POSITIVE_INFINITY));
  }
  clock.now = 62;
  const refused = await p.slot(Number.POSITIVE_INFINITY);
  for (const place of places.slice(0, answeredFirst)) p.answered(place, "accepted");
  clock.now = 64;
  p.answered(refused, "refused");
  clock.now = 66;
  for (const place of places.slice(answeredFirst)) p.answered(place, "accepted");
  return { p, clock, sleeps };
}

describe("RequestPacer", () => {
  test("sends without waiting until the server refuses a request", async () => {
    const { pacer: p, sleeps } = pacer();
    expect(await unpacedOf(p, sleeps, 100)).toBe(100);
  });

  test("learns the requests the server accepted in the second before its first refusal", async () => {
    const { p, clock, sleeps } = await burstWithRefusal(20);
    clock.now = 2_000;
    expect(await unpacedOf(p, sleeps, 25)).toBe(20);
  });

  test("counts the accepted requests sent before the refusal whose answers came after it", async () => {
    // Small refusals overtake large answers: 14 of the 20 accepted lists were answered after the 429.
    const { p, clock, sleeps } = await burstWithRefusal(6);
    clock.now = 2_000;
    expect(await unpacedOf(p, sleeps, 25)).toBe(20);
  });

  test("every accepted answer after the refusal: the pace is the twenty, not one more", async () => {
    const { p, clock, sleeps } = await burstWithRefusal(0);
    clock.now = 2_000;
    expect(await unpacedOf(p, sleeps, 25)).toBe(20);
  });

  test("an answer that comes more than a second after the refusal does not count: the server handled it in a later second", async () => {
    const { pacer: p, clock, sleeps } = pacer();
    const places: Place[] = [];
    for (let i = 0; i < 20; i++) places.push(await p.slot(Number.POSITIVE_INFINITY));
    for (const place of places.slice(0, 10)) p.answered(place, "accepted");
    p.answered(await p.slot(Number.POSITIVE_INFINITY), "refused");
    clock.now = 1_500;
    for (const place of places.slice(10)) p.answered(place, "accepted");
    clock.now = 5_000;
    expect(await unpacedOf(p, sleeps, 25)).toBe(10);
  });

  test("a refusal within two seconds of the one it learnt from does not lower the pace; a later one lowers it by one", async () => {
    const { p, clock, sleeps } = await burstWithRefusal(20);
    clock.now = 1_000;
    p.answered(await p.slot(Number.POSITIVE_INFINITY), "refused");
    clock.now = 3_000;
    expect(await unpacedOf(p, sleeps, 25)).toBe(20);
    clock.now = 5_000;
    p.answered(await p.slot(Number.POSITIVE_INFINITY), "refused");
    clock.now = 7_000;
    expect(await unpacedOf(p, sleeps, 25)).toBe(19);
  });

  test("a refusal of a request sent before the pace was learnt or last lowered does not lower it", async () => {
    const { pacer: p, clock, sleeps } = pacer();
    const places: Place[] = [];
    for (let i = 0; i < 22; i++) places.push(await p.slot(Number.POSITIVE_INFINITY));
    for (const place of places.slice(0, 20)) p.answered(place, "accepted");
    p.answered(places[20], "refused");
    clock.now = 3_000;
    p.answered(places[21], "refused");
    clock.now = 6_000;
    expect(await unpacedOf(p, sleeps, 25)).toBe(20);
  });

  test("a request sent at its latest time without a free place: its refusal does not lower the pace", async () => {
    const { p, clock, sleeps } = await burstWithRefusal(20);
    clock.now = 3_000;
    const held: Place[] = [];
    for (let i = 0; i < 20; i++) held.push(await p.slot(Number.POSITIVE_INFINITY));
    for (const place of held) p.answered(place, "accepted");
    const forced = await p.slot(clock.now);
    expect(forced.forced).toBe(true);
    p.answered(forced, "refused");
    clock.now = 6_000;
    expect(await unpacedOf(p, sleeps, 25)).toBe(20);
  });

  test("a place released (its request not sent) is free at once", async () => {
    const { p, clock, sleeps } = await burstWithRefusal(20);
    clock.now = 2_000;
    const places: Place[] = [];
    for (let i = 0; i < 20; i++) places.push(await p.slot(Number.POSITIVE_INFINITY));
    p.release(places[0]);
    for (const place of places.slice(1)) p.answered(place, "accepted");
    expect(await unpacedOf(p, sleeps, 1)).toBe(1);
  });

  test("a request sent after the pace was learnt does not raise it", async () => {
    const { p, clock, sleeps } = await burstWithRefusal(20);
    clock.now = 1_100;
    p.answered(await p.slot(Number.POSITIVE_INFINITY), "accepted");
    clock.now = 3_000;
    expect(await unpacedOf(p, sleeps, 25)).toBe(20);
  });

  test("a place is free a second after its answer, however long the request took", async () => {
    const { p, clock, sleeps } = await burstWithRefusal(20);
    clock.now = 2_000;
    const slow: Place[] = [];
    for (let i = 0; i < 20; i++) slow.push(await p.slot(Number.POSITIVE_INFINITY));
    clock.now = 2_600;
    for (const place of slow) p.answered(place, "accepted");
    clock.now = 2_700;
    await p.slot(Number.POSITIVE_INFINITY);
    expect(sleeps).toEqual([900]);
  });

  test("while every place is held by a request in flight, the next waits for an answer, then a second", async () => {
    const { p, clock, sleeps } = await burstWithRefusal(20);
    clock.now = 2_000;
    const inFlight: Place[] = [];
    for (let i = 0; i < 20; i++) inFlight.push(await p.slot(Number.POSITIVE_INFINITY));
    let sent = false;
    const next = p.slot(Number.POSITIVE_INFINITY).then(() => (sent = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toBe(false);
    clock.now = 2_400;
    p.answered(inFlight[0], "failed");
    await next;
    expect(sleeps).toEqual([1_000]);
  });

  test("a refused login teaches nothing (logins have a limit of their own)", async () => {
    const { pacer: p, clock, sleeps } = pacer();
    for (let i = 0; i < 5; i++) p.answered(await p.slot(Number.POSITIVE_INFINITY), "accepted");
    p.answered(await p.slot(Number.POSITIVE_INFINITY), "refused login");
    clock.now = 10;
    expect(await unpacedOf(p, sleeps, 50)).toBe(50);
  });

  test("waits no later than the latest time it is given", async () => {
    const { p, clock, sleeps } = await burstWithRefusal(20);
    clock.now = 100;
    await p.slot(400);
    expect(sleeps).toEqual([300]);
  });
});
