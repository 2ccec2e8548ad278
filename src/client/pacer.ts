/**
 * Paces one client's requests to what the server showed it accepts, once it has refused one (HTTP
 * 429). A rate limit the API does not publish is learnt from the requests it accepted in the
 * second before its first refusal (also those whose answers come after the refusal's); from then
 * on a request is sent only while fewer than that many were answered in the last second or are in
 * flight. The server counts a request at some moment between its sending and its answer, so this
 * keeps to any limit of that many per second however long requests take on the way; a refusal
 * after that (at most one counted per two seconds, as a burst of them follows one cause) lowers
 * the pace by one request. Until the first refusal nothing waits. A login takes a place like any
 * request, but its refusal teaches nothing: logins have a limit of their own (a few a minute).
 */
export class RequestPacer {
  /** The places taken in the last window: when each request was answered, Infinity while it is in flight. */
  private readonly places: Place[] = [];
  /** Start times of the requests the server accepted, the last window's and a margin. */
  private readonly accepted: number[] = [];
  private perSecond = Number.POSITIVE_INFINITY;
  /** When the pace was last lowered. */
  private loweredAt = Number.NEGATIVE_INFINITY;
  /** The start times the pace was learnt from: an answer that comes later to a request sent then still counts. */
  private learntFrom: { readonly from: number; readonly to: number } | undefined;
  /** Slots waiting for an answer to free a place. */
  private waiting: (() => void)[] = [];

  constructor(
    private readonly now: () => number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  /**
   * Waits for the request's place in the pace, no later than `latest` (except while every place is
   * held by a request in flight: each of those ends within its own timeout). The place is taken
   * before the wait, so requests sent side by side get one place each. Every place taken must be
   * given back through answered().
   */
  async slot(latest: number): Promise<Place> {
    while (this.heldInFlight() && this.now() < latest) await new Promise<void>((resolve) => this.waiting.push(resolve));
    const now = this.now();
    const at = Math.min(Math.max(this.freeAt(), now), Math.max(now, latest));
    const place: Place = { startedAt: at, answeredAt: Number.POSITIVE_INFINITY };
    this.places.push(place);
    if (at > now) await this.sleep(at - now);
    return place;
  }

  /** How the request of `place` ended; gives its place back a window from now. */
  answered(place: Place, outcome: PaceOutcome): void {
    const now = this.now();
    place.answeredAt = now;
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
    if (outcome === "accepted") {
      this.accepted.push(place.startedAt);
      prune(this.accepted, (t) => t <= now - LEARNING_MS);
      // Sent side by side with the refused request and answered within the second after it: the server counted it too.
      const learnt = this.learntFrom;
      if (learnt !== undefined && place.startedAt > learnt.from && place.startedAt <= learnt.to && now - learnt.to < WINDOW_MS) {
        this.perSecond += 1;
      }
    }
    if (outcome !== "refused") return;
    prune(this.accepted, (t) => t <= now - LEARNING_MS);
    if (!Number.isFinite(this.perSecond)) {
      this.perSecond = Math.max(1, this.accepted.length);
      this.learntFrom = { from: now - LEARNING_MS, to: now };
    } else if (now - this.loweredAt >= 2000) this.perSecond = Math.max(1, this.perSecond - 1);
    else return;
    this.loweredAt = now;
  }

  /** Whether the window is full of requests still in flight, so that no wait on the clock frees a place. */
  private heldInFlight(): boolean {
    this.dropExpired();
    const answered = this.places.filter((p) => Number.isFinite(p.answeredAt)).length;
    return this.places.length >= this.perSecond && answered < this.places.length - this.perSecond + 1;
  }

  /** When a place is free: a window after enough of the places taken were answered. */
  private freeAt(): number {
    this.dropExpired();
    if (this.places.length < this.perSecond) return Number.NEGATIVE_INFINITY;
    const answered = this.places
      .map((p) => p.answeredAt)
      .filter(Number.isFinite)
      .sort((a, b) => a - b);
    return (answered[this.places.length - this.perSecond] ?? Number.POSITIVE_INFINITY) + WINDOW_MS;
  }

  private dropExpired(): void {
    const since = this.now() - WINDOW_MS;
    let kept = 0;
    for (const p of this.places) if (p.answeredAt > since) this.places[kept++] = p;
    this.places.length = kept;
  }
}

/** How a request ended: answered (accepted, or refused with 429: a login's refusal teaches nothing), or failed on the way. */
export type PaceOutcome = "accepted" | "refused" | "refused login" | "failed";

/** A request's place in the pace. */
export interface Place {
  /** When the request was sent (on the pacer's clock). */
  readonly startedAt: number;
  /** When its answer came, or it failed; Infinity while in flight. */
  answeredAt: number;
}

/** The server's window: a second. A place is free a window after the answer that held it. */
const WINDOW_MS = 1_000;
/** How far back from a refusal the accepted requests are counted: the window, and the time a request may take to reach the server. */
const LEARNING_MS = 1_050;

/** Drops the leading times `old` says are out of the window (they are in ascending order, roughly). */
function prune(times: number[], old: (t: number) => boolean): void {
  let drop = 0;
  while (drop < times.length && old(times[drop])) drop++;
  if (drop > 0) times.splice(0, drop);
}
