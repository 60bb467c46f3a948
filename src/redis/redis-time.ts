/**
 * Redis's clock as seen from this process, so a deadline on the local clock can travel to a
 * script as a time on Redis's (the server-side expiry of take scripts). Wall clocks are not
 * used: the app's and Redis's may be minutes apart. Instead the store learns the offset
 * θ = Redis `TIME` − local `clock.now()` from replies that carry Redis's time.
 *
 * A reply stamped with Redis time r, for a call sent at local time s and answered at local
 * time a, bounds the offset: r − a ≤ θ ≤ r − s. The estimate is the largest lower bound seen,
 * so an expiry sent in Redis time is never later than the local deadline it stands for; a
 * stalled reply (a late `a`) only gives a lower bound that changes nothing. Two ways the
 * estimate can go wrong, and how it mends:
 * - Redis's clock steps back (or runs slower than ours): a reply's upper bound falls below the
 *   estimate, which then restarts from that reply's lower bound.
 * - Redis's clock steps forward (a failover to a host whose clock is ahead): calls sent with
 *   the old estimate expire early, and their own replies raise it — one round trip.
 *
 * @module
 */

/** The offset between the local clock and Redis `TIME`, learned from replies. */
export class RedisTime {
  // Redis ms − local ms; NaN until the first reply.
  #offsetMs = Number.NaN;

  /** True once a reply has been seen. */
  get known(): boolean {
    return !Number.isNaN(this.#offsetMs);
  }

  /**
   * Learns from a reply stamped `redisUs` (Redis µs) for a call sent at local time `sentAt`
   * and answered at `answeredAt` (ms on the store's clock).
   */
  observe(sentAt: number, answeredAt: number, redisUs: number): void {
    if (!Number.isFinite(redisUs) || !(answeredAt >= sentAt)) return;
    const redisMs = redisUs / 1000;
    const low = redisMs - answeredAt;
    const high = redisMs - sentAt;
    // `!(x <= high)` is also true for NaN: the first reply sets the estimate.
    if (!(this.#offsetMs <= high) || low > this.#offsetMs) this.#offsetMs = low;
  }

  /** Local time `localMs` as whole Redis µs (rounded down), or '' while unknown. */
  toRedisUs(localMs: number): number | '' {
    if (Number.isNaN(this.#offsetMs)) return '';
    return Math.floor((localMs + this.#offsetMs) * 1000);
  }
}
