import type { ElectorTimings } from '../election/elector-options.js';

/** Re-asks within one holder term back off up to this many times the first wait. */
const MAX_BACKOFF_FACTOR = 4;

interface Asked {
  holder: string;
  term: number | null;
  /** No request before this time (monotonic ms). */
  nextAt: number;
  asks: number;
}

/**
 * When a follower may ask the holder of an election for it by priority. Per holder term:
 *
 * - not before the term has been seen for 2 renew intervals: a holder made leader by an operator's
 *   directed handover learns that it is pinned at its first renewal and publishes it at the next;
 *   a request landing before would undo the operator's choice;
 * - then once; again in the same term only after a back-off (a renew interval and two retries,
 *   doubling up to 4 times that), because the holder declined (pinned, a stale view), the store
 *   kept an operator's request, or the request was lost. A new holder or term asks afresh.
 */
export class PriorityAsks {
  private readonly byElection = new Map<string, Asked>();

  /** Whether a request for `election` may go now, its holder and term as observed. */
  due(election: string, holder: string, term: number | null, now: number, timings: Readonly<ElectorTimings>): boolean {
    let entry = this.byElection.get(election);
    if (entry?.holder !== holder || entry.term !== term) {
      entry = { holder, term, nextAt: now + 2 * timings.renewIntervalMs, asks: 0 };
      this.byElection.set(election, entry);
    }
    return now >= entry.nextAt;
  }

  /** A request for `election` went (or was tried): the next only after the back-off. */
  asked(election: string, now: number, timings: Readonly<ElectorTimings>): void {
    const entry = this.byElection.get(election);
    if (!entry) return;
    entry.asks += 1;
    const base = timings.renewIntervalMs + 2 * timings.retryIntervalMs;
    entry.nextAt = now + base * Math.min(MAX_BACKOFF_FACTOR, 2 ** (entry.asks - 1));
  }

  /** Forget elections no longer run here. */
  keep(elections: ReadonlySet<string>): void {
    for (const election of this.byElection.keys()) if (!elections.has(election)) this.byElection.delete(election);
  }
}
