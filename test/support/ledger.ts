import { appendFileSync, readFileSync } from 'node:fs';

/**
 * The chaos ledger: one JSON line per fact, appended by every instance to one file (O_APPEND
 * writes of a line are atomic on Linux). All processes share the machine's wall clock, so their
 * intervals are comparable. Times are epoch milliseconds.
 */
export type LedgerEntry =
  /** A term began (the `elected` event). */
  | { t: 'term'; id: string; term: number; at: number }
  /** Until when the instance may act in this term (elected/renewed `validUntil`). */
  | { t: 'valid'; id: string; term: number; until: number }
  /** The term ended as the instance saw it (`revoked`); may be written late after a pause. */
  | { t: 'end'; id: string; term: number; at: number; reason?: string }
  /** One leader-only side effect, performed after checking `isLeader()`. */
  | { t: 'step'; id: string; term: number; at: number; job: string }
  /** A whole leader-only execution (start..end); `aborted` when it stopped on the term's signal. */
  | { t: 'exec'; id: string; term: number; start: number; end: number; job: string; aborted: boolean }
  | { t: 'error'; id: string; at: number; message: string };

export function appendLedger(file: string, entry: LedgerEntry): void {
  appendFileSync(file, `${JSON.stringify(entry)}\n`);
}

export function readLedger(file: string): LedgerEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LedgerEntry);
}

export interface ActingInterval {
  id: string;
  term: number;
  start: number;
  /**
   * min(end seen by the instance, its deadline): a paused process stops acting at its deadline.
   * With {@link SendEvidence}, the deadline is the independent one (last successful request seen
   * by the proxy + renewDeadline); without, the instance's own `validUntil` claim.
   */
  end: number;
}

/**
 * What a proxy in front of the store saw, per instance: when each lease acquire/renew request
 * arrived (always after the elector sent it) and whether it succeeded. The deadline rule is
 * "renewDeadline after the *send* of the last successful acquire/renew", so `arrival +
 * renewDeadline` bounds the term from above without trusting anything the elector says.
 */
export interface SendEvidence {
  /** Instances whose every store call went through a logging proxy, with their renewDeadlineMs. */
  renewDeadlineMs: ReadonlyMap<string, number>;
  sends: ReadonlyArray<{ id: string; op: 'acquire' | 'renew'; at: number; ok: boolean }>;
}

/**
 * How far a `validUntil` claim may exceed the independent bound: 1 ms for each of the two
 * whole-ms clocks, plus a 0.05 % slew between the elector's monotonic and wall clocks over the
 * deadline. "Deadline from the answer" overstates by a round trip, more than this under load.
 */
export const claimSlackMs = (renewDeadlineMs: number) => 2 + renewDeadlineMs * 0.0005;

export interface LedgerReport {
  intervals: ActingInterval[];
  violations: string[];
  /** Longest stretch with nobody acting, between the first acting instant and `until`. */
  longestGapMs: (from: number, until: number) => number;
}

/**
 * Checks the ledger; `now` closes intervals still open (the instance is still leading). With
 * `evidence`, acting ends at the independent deadline and each `validUntil` is only cross-checked.
 */
export function checkLedger(entries: LedgerEntry[], now = Date.now(), evidence?: SendEvidence): LedgerReport {
  const violations: string[] = [];
  const key = (id: string, term: number) => `${id}#${term}`;
  const intervals = new Map<string, ActingInterval>();
  const validUntil = new Map<string, number>();
  const ended = new Map<string, number>();
  for (const e of entries) {
    if (e.t === 'term') intervals.set(key(e.id, e.term), { id: e.id, term: e.term, start: e.at, end: now });
    if (e.t === 'valid') validUntil.set(key(e.id, e.term), Math.max(validUntil.get(key(e.id, e.term)) ?? 0, e.until));
    if (e.t === 'end') ended.set(key(e.id, e.term), e.at);
    if (e.t === 'error') violations.push(`${e.id}: unhandled error: ${e.message}`);
  }
  const independent = evidence ? independentDeadlines([...intervals.values()], evidence, violations) : undefined;
  for (const [k, interval] of intervals) {
    const until = validUntil.get(k);
    if (until === undefined) violations.push(`${k}: term started without a validity bound`);
    const bound = independent?.get(k);
    const slack = claimSlackMs(evidence?.renewDeadlineMs.get(interval.id) ?? 0);
    if (bound !== undefined && until !== undefined && until > bound + slack) {
      violations.push(
        `${k} claimed validity until ${until}, ${until - bound} ms past its independent deadline ${bound} ` +
          `(last successful acquire/renew seen by the proxy + renewDeadline): the elector overstates its deadline`,
      );
    }
    interval.end = Math.min(ended.get(k) ?? now, bound ?? until ?? interval.start, now);
  }
  const sorted = [...intervals.values()].sort((a, b) => a.start - b.start);
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j].start < sorted[i].end; j++) {
      violations.push(
        `overlap: ${sorted[i].id} term ${sorted[i].term} acted until ${sorted[i].end}, ` +
          `${sorted[j].id} term ${sorted[j].term} from ${sorted[j].start} (${sorted[i].end - sorted[j].start} ms)`,
      );
    }
    if (i > 0 && sorted[i].term <= sorted[i - 1].term) {
      violations.push(
        `term did not increase: ${sorted[i - 1].id}#${sorted[i - 1].term} then ${sorted[i].id}#${sorted[i].term}`,
      );
    }
  }
  for (const e of entries) {
    if (e.t !== 'step' && e.t !== 'exec') continue;
    const interval = intervals.get(key(e.id, e.term));
    const at = e.t === 'step' ? e.at : e.start;
    if (!interval || at < interval.start || at > interval.end) {
      violations.push(`${e.t} of ${e.job} by ${e.id} term ${e.term} at ${at} outside its acting interval`);
    }
  }
  const longestGapMs = (from: number, until: number) => {
    let gap = 0;
    let cursor = from;
    for (const interval of sorted) {
      if (interval.end <= cursor) continue;
      if (interval.start > cursor) gap = Math.max(gap, Math.min(interval.start, until) - cursor);
      cursor = Math.max(cursor, interval.end);
      if (cursor >= until) break;
    }
    return Math.max(gap, until - cursor);
  };
  return { intervals: sorted, violations, longestGapMs };
}

/** A stretch during which an instance must keep talking to the store (alive, running, not paused). */
export interface ContentionWindow {
  id: string;
  from: number;
  until: number;
}

/**
 * "Followers contend for the whole process lifetime": within each window, the instance's store
 * calls (arrival times at its proxy) may never be further apart than `maxSilenceMs`, counting the
 * window's edges. A follower that stopped polling (or a leader that stopped renewing) shows up as
 * one long silence.
 */
export function checkContention(
  calls: ReadonlyArray<{ id: string; at: number }>,
  windows: readonly ContentionWindow[],
  maxSilenceMs: number,
): string[] {
  const violations: string[] = [];
  for (const window of windows) {
    if (window.until <= window.from) continue;
    const times = calls
      .filter((call) => call.id === window.id && call.at >= window.from && call.at <= window.until)
      .map((call) => call.at)
      .sort((a, b) => a - b);
    let cursor = window.from;
    for (const at of [...times, window.until]) {
      if (at - cursor > maxSilenceMs) {
        violations.push(
          `${window.id} made no store call for ${at - cursor} ms (from ${cursor} to ${at}; allowed ${maxSilenceMs} ms): it stopped contending`,
        );
      }
      cursor = at;
    }
  }
  return violations;
}

/**
 * Per term, the latest moment it may act by the rule, from the proxy's log alone: renewDeadline
 * after the last successful acquire/renew that arrived between the term's acquire and the same
 * instance's next term.
 */
function independentDeadlines(
  terms: ActingInterval[],
  evidence: SendEvidence,
  violations: string[],
): Map<string, number> {
  const bounds = new Map<string, number>();
  for (const [id, renewDeadlineMs] of evidence.renewDeadlineMs) {
    const own = terms.filter((t) => t.id === id).sort((a, b) => a.start - b.start);
    const sends = evidence.sends.filter((s) => s.id === id && s.ok).sort((a, b) => a.at - b.at);
    own.forEach((term, index) => {
      const acquired = sends.filter((s) => s.op === 'acquire' && s.at <= term.start).at(-1);
      if (!acquired) {
        violations.push(`${id}#${term.term}: elected without a successful acquire in the proxy's log`);
        bounds.set(`${id}#${term.term}`, term.start);
        return;
      }
      const next = own[index + 1]?.start ?? Number.POSITIVE_INFINITY;
      const last = sends.filter((s) => s.at >= acquired.at && s.at < next).at(-1) ?? acquired;
      bounds.set(`${id}#${term.term}`, last.at + renewDeadlineMs);
    });
  }
  return bounds;
}
