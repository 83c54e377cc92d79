/**
 * The pause before etcd3 redials a broken watch stream. etcd3 waits with a plain (ref'd) timer that
 * its client's close() never clears, and its default back-off grows to 30 s: after a lost quorum
 * the stream breaks again and again, and a process that closed its store then stays alive until the
 * last of those timers fires (seen: > 15 s after app.close()). Ours grows from 100 ms to
 * {@link WATCH_REDIAL_MAX_MS} — the watch only spares followers a poll, so a quick redial of a member
 * that came back matters more than sparing a dead one a dial — and is 0 once the store is closed, so
 * the pending redial finds no watcher left and ends at once.
 */
export const WATCH_REDIAL_MAX_MS = 2_000;
const WATCH_REDIAL_FIRST_MS = 100;

/** The shape etcd3's WatchManager uses (cockatiel's IBackoff): read `duration`, then `next()`. */
export class WatchRedialBackoff {
  constructor(
    private readonly closed: () => boolean,
    private readonly attempt = 0,
  ) {}

  get duration(): number {
    if (this.closed()) return 0;
    const ceiling = Math.min(WATCH_REDIAL_MAX_MS, WATCH_REDIAL_FIRST_MS * 2 ** this.attempt);
    // Jitter keeps the watchers of many replicas from redialling a member in lockstep.
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  next(): WatchRedialBackoff {
    return new WatchRedialBackoff(this.closed, Math.min(this.attempt + 1, 16));
  }
}
