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
  /** Start times of the requests sent, the last second's. */
  private readonly started: number[] = [];
  private perSecond = Number.POSITIVE_INFINITY;
  /** When the pace was last lowered. */
  private loweredAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly now: () => number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  /** The pace learnt, in requests per second; Infinity before any refusal. */
  get requestsPerSecond(): number {
    return this.perSecond;
  }

  /** Waits, no later than `latest`, for a place in the pace; returns the request's start time. */
  async slot(latest: number): Promise<number> {
    for (;;) {
      const now = this.now();
      prune(this.started, now);
      if (this.started.length < this.perSecond || now >= latest) {
        this.started.push(now);
        return now;
      }
      await this.sleep(Math.min(this.started[0] + WINDOW_MS - now, latest - now) + 1);
    }
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
