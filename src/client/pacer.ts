/**
 * Paces one client's requests to what the server showed it accepts, once it has refused one (HTTP
 * 429, or a `status: false` saying so). A rate limit the API does not publish is learnt from the
 * requests it accepted in the second before its first refusal (also those sent beside the refused
 * one whose answers come just after it); from then on a request is sent only while fewer than that
 * many were answered in the last second or are in flight. The server counts a request at some
 * moment between its sending and its answer, so this keeps to any limit of that many per second
 * however long requests take on the way. A refusal of a request sent under the pace (at most one
 * counted per two seconds, as a burst of them follows one cause) lowers it by one. Until the first
 * refusal nothing waits. A login takes a place like any request, but its refusal teaches nothing:
 * logins have a limit of their own (a few a minute).
 */
export class RequestPacer {
  /** The places taken in the last window: when each request was answered, Infinity while it is in flight. */
  private readonly places: Place[] = [];
  /** Start times of the requests the server accepted, the last window's and a margin. */
  private readonly accepted: number[] = [];
  /** What the first refusal taught: the requests accepted around it, and the sending times that counted. */
  private learnt: { accepted: number; readonly from: number; readonly to: number; readonly at: number } | undefined;
  /** Times the pace was lowered since, and when last. */
  private lowered = 0;
  private loweredAt = Number.NEGATIVE_INFINITY;
  /** Places taken so far, and how many had been when the pace last changed: later ones were sent under it. */
  private taken = 0;
  private takenBeforePace = 0;
  /** Slots waiting for an answer to free a place. */
  private waiting: (() => void)[] = [];

  constructor(
    private readonly now: () => number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  /**
   * Waits for the request's place in the pace, and takes it. The wait on the clock ends at `latest`
   * (the place is then taken without being free: see Place.forced); a wait while every place is held
   * by a request in flight ends with an answer, which each of those gets within its own timeout: the
   * caller checks its deadline again. The place is taken before the wait, so requests sent side by
   * side get one place each. Every place taken is given back, through answered() or release().
   */
  async slot(latest: number): Promise<Place> {
    let freeAt = this.freeAt();
    // No wait on the clock frees a place while the window is full of requests still in flight.
    while (freeAt === Number.POSITIVE_INFINITY && this.now() < latest) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      freeAt = this.freeAt();
    }
    const now = this.now();
    const free = Math.max(freeAt, now);
    const at = Math.min(free, Math.max(now, latest));
    const place: Place = { startedAt: at, answeredAt: Number.POSITIVE_INFINITY, forced: at < free, serial: this.taken++ };
    this.places.push(place);
    if (at > now) await this.sleep(at - now);
    return place;
  }

  /** Gives back a place whose request was not sent. */
  release(place: Place): void {
    const i = this.places.indexOf(place);
    if (i >= 0) this.places.splice(i, 1);
    this.wake();
  }

  /** How the request of `place` ended; its place is free a window from now. */
  answered(place: Place, outcome: PaceOutcome): void {
    const now = this.now();
    place.answeredAt = now;
    this.wake();
    const learnt = this.learnt;
    if (outcome === "accepted") {
      this.accepted.push(place.startedAt);
      prune(this.accepted, (t) => t <= now - LEARNING_MS);
      // Sent beside the refused request and answered within the second after it: the server counted it too.
      if (learnt !== undefined && place.startedAt > learnt.from && place.startedAt <= learnt.to && now - learnt.at < WINDOW_MS) {
        learnt.accepted += 1;
      }
      return;
    }
    if (outcome !== "refused" || place.forced) return;
    if (learnt === undefined) {
      prune(this.accepted, (t) => t <= now - LEARNING_MS);
      this.learnt = { accepted: this.accepted.length, from: now - LEARNING_MS, to: place.startedAt, at: now };
    } else if (place.serial >= this.takenBeforePace && now - this.loweredAt >= 2000) {
      // Only a request sent under the pace as it stands says that the pace is too high.
      this.lowered += 1;
    } else return;
    this.loweredAt = now;
    this.takenBeforePace = this.taken;
  }

  /** Requests per second, once learnt. */
  private get perSecond(): number {
    return this.learnt === undefined ? Number.POSITIVE_INFINITY : Math.max(1, this.learnt.accepted - this.lowered);
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resume of waiting) resume();
  }

  /** When a place is free: a window after enough of the places taken were answered; Infinity while too few were. */
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

/** How a request ended: answered (accepted, or refused as rate-limited: a login's refusal teaches nothing), or failed on the way. */
export type PaceOutcome = "accepted" | "refused" | "refused login" | "failed";

/** A request's place in the pace. */
export interface Place {
  /** When the request was sent (on the pacer's clock). */
  readonly startedAt: number;
  /** When its answer came, or it failed; Infinity while in flight. */
  answeredAt: number;
  /** Sent at its latest time without a free place: its refusal says nothing about the pace. */
  readonly forced: boolean;
  /** Its order among the places taken. */
  readonly serial: number;
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
