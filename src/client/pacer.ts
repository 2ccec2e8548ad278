/**
 * Paces one client's requests to what the server showed it accepts, once it has refused one (HTTP
 * 429): a rate limit the API does not publish is learnt from the requests it accepted in the window
 * before its first refusal, and every request after waits for a place in a sliding window of that
 * size. Until then nothing waits. The window is a second and a margin, since a request reaches the
 * server a little after it leaves; a refusal within the pace (at most one counted per two seconds,
 * as a burst of them follows one cause) lowers it by one request. Logins are not paced here: their
 * limit is another (a few a minute), and each process logs in once.
 */
export class RequestPacer {
  /** Start times (on `now`) of the requests the server accepted, the last second's. */
  private readonly accepted: number[] = [];
  /** Start times of the requests sent (and places reserved), the last window's. */
  private readonly started: number[] = [];
  private perSecond = Number.POSITIVE_INFINITY;
  /** When the pace was last lowered. */
  private loweredAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly now: () => number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  /**
   * Waits for the request's place in the pace, no later than `latest`; returns its start time. The
   * place is reserved before the wait, so requests sent side by side get one place each, in order.
   */
  async slot(latest: number): Promise<number> {
    const now = this.now();
    prune(this.started, now);
    let at = now;
    if (this.started.length >= this.perSecond) at = this.started[this.started.length - this.perSecond] + WINDOW_MS;
    at = Math.min(Math.max(at, this.started[this.started.length - 1] ?? at, now), Math.max(now, latest));
    this.started.push(at);
    if (at > now) await this.sleep(at - now);
    return at;
  }

  /** What the server answered the request started at `startedAt`. */
  answered(startedAt: number, refused: boolean): void {
    const now = this.now();
    if (!refused) {
      this.accepted.push(startedAt);
      return;
    }
    prune(this.accepted, now);
    if (!Number.isFinite(this.perSecond)) this.perSecond = Math.max(1, this.accepted.length);
    else if (now - this.loweredAt >= 2000) this.perSecond = Math.max(1, this.perSecond - 1);
    else return;
    this.loweredAt = now;
  }
}

/** The pace's window: a second, and the time a request may take to reach the server. */
const WINDOW_MS = 1_050;

/** Drops the times older than the window before `now` (they are in ascending order, roughly). */
function prune(times: number[], now: number): void {
  let drop = 0;
  while (drop < times.length && times[drop] <= now - WINDOW_MS) drop++;
  if (drop > 0) times.splice(0, drop);
}
