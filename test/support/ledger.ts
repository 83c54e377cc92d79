import { appendFileSync, readFileSync } from 'node:fs';

/**
 * The chaos ledger: one JSON line per fact, appended by every instance to one file (O_APPEND
 * writes of a line are atomic on Linux). All processes share the machine's wall clock, so their
 * intervals are comparable. Times are epoch milliseconds.
 */
export type LedgerEntry =
  /** A term began (the `elected` event). */
  | ({ t: 'term'; id: string; term: number; at: number } & OfElection)
  /** Until when the instance may act in this term (elected/renewed `validUntil`). */
  | ({ t: 'valid'; id: string; term: number; until: number } & OfElection)
  /** The term ended as the instance saw it (`revoked`); may be written late after a pause. */
  | ({ t: 'end'; id: string; term: number; at: number; reason?: string } & OfElection)
  /** One leader-only side effect, performed after checking `isLeader()`. */
  | ({ t: 'step'; id: string; term: number; at: number; job: string } & OfElection)
  /** A whole leader-only execution (start..end); `aborted` when it stopped on the term's signal. */
  | ({ t: 'exec'; id: string; term: number; start: number; end: number; job: string; aborted: boolean } & OfElection)
  | { t: 'error'; id: string; at: number; message: string };

/**
 * Which election a fact belongs to, when an app runs several: terms, overlaps and term order are
 * judged per election (two instances leading different elections at once is the point of spread).
 * Absent: the ledger's one election (fixtures with a single election write none).
 */
export interface OfElection {
  election?: string;
}

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

export interface ActingInterval extends OfElection {
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
  /** `election`: the lease the request was for (absent: it applies to every election of `id`). */
  sends: ReadonlyArray<{ id: string; op: 'acquire' | 'renew'; at: number; ok: boolean } & OfElection>;
}

/**
 * How far a `validUntil` claim may exceed the independent bound: 1 ms for each of the two
 * whole-ms clocks, plus a 0.05 % slew between the elector's monotonic and wall clocks over the
 * deadline. "Deadline from the answer" overstates by a round trip, more than this under load.
 */
export const claimSlackMs = (renewDeadlineMs: number) => 2 + renewDeadlineMs * 0.0005;

export interface LedgerReport {
  /** Every term of every election, by start. */
  intervals: ActingInterval[];
  violations: string[];
  /**
   * Longest stretch with nobody acting, between the first acting instant and `until`: in
   * `election` when given, else over every interval (one election: the same thing).
   */
  longestGapMs: (from: number, until: number, election?: string) => number;
}

/** `id#term`, with its election in front when the ledger names one: how violations name a term. */
const termName = (id: string, term: number, election?: string) =>
  election === undefined ? `${id}#${term}` : `${election}: ${id}#${term}`;
/** The map key of a term: its election, instance and number. */
const termKey = (e: { id: string; term: number } & OfElection) => JSON.stringify([e.election ?? null, e.id, e.term]);

/**
 * Checks the ledger; `now` closes intervals still open (the instance is still leading). With
 * `evidence`, acting ends at the independent deadline and each `validUntil` is only cross-checked.
 * Overlaps and term order are judged per election: at any instant at most one instance acts as
 * leader *of each election*.
 */
export function checkLedger(entries: LedgerEntry[], now = Date.now(), evidence?: SendEvidence): LedgerReport {
  const violations: string[] = [];
  const intervals = new Map<string, ActingInterval>();
  const validUntil = new Map<string, number>();
  const ended = new Map<string, number>();
  for (const e of entries) {
    if (e.t === 'error') {
      violations.push(`${e.id}: unhandled error: ${e.message}`);
      continue;
    }
    const k = termKey(e);
    if (e.t === 'term') {
      intervals.set(k, {
        id: e.id,
        term: e.term,
        start: e.at,
        end: now,
        ...(e.election === undefined ? {} : { election: e.election }),
      });
    }
    if (e.t === 'valid') validUntil.set(k, Math.max(validUntil.get(k) ?? 0, e.until));
    if (e.t === 'end') ended.set(k, e.at);
  }
  const independent = evidence ? independentDeadlines([...intervals.values()], evidence, violations) : undefined;
  for (const [k, interval] of intervals) {
    const name = termName(interval.id, interval.term, interval.election);
    const until = validUntil.get(k);
    if (until === undefined) violations.push(`${name}: term started without a validity bound`);
    const bound = independent?.get(k);
    const slack = claimSlackMs(evidence?.renewDeadlineMs.get(interval.id) ?? 0);
    if (bound !== undefined && until !== undefined && until > bound + slack) {
      violations.push(
        `${name} claimed validity until ${until}, ${until - bound} ms past its independent deadline ${bound} ` +
          `(last successful acquire/renew seen by the proxy + renewDeadline): the elector overstates its deadline`,
      );
    }
    interval.end = Math.min(ended.get(k) ?? now, bound ?? until ?? interval.start, now);
  }
  const sorted = [...intervals.values()].sort((a, b) => a.start - b.start);
  const byElection = new Map<string | undefined, ActingInterval[]>();
  for (const interval of sorted) {
    const group = byElection.get(interval.election) ?? [];
    group.push(interval);
    byElection.set(interval.election, group);
  }
  for (const [election, group] of byElection) violations.push(...overlapsAndOrder(group, election));
  for (const e of entries) {
    if (e.t !== 'step' && e.t !== 'exec') continue;
    const interval = intervals.get(termKey(e));
    const at = e.t === 'step' ? e.at : e.start;
    if (!interval || at < interval.start || at > interval.end) {
      const of = e.election === undefined ? '' : ` of ${e.election}`;
      violations.push(`${e.t} of ${e.job} by ${e.id} term ${e.term}${of} at ${at} outside its acting interval`);
    }
  }
  const longestGapMs = (from: number, until: number, election?: string) => {
    let gap = 0;
    let cursor = from;
    for (const interval of election === undefined ? sorted : (byElection.get(election) ?? [])) {
      if (interval.end <= cursor) continue;
      if (interval.start > cursor) gap = Math.max(gap, Math.min(interval.start, until) - cursor);
      cursor = Math.max(cursor, interval.end);
      if (cursor >= until) break;
    }
    return Math.max(gap, until - cursor);
  };
  return { intervals: sorted, violations, longestGapMs };
}

/** One election's terms, by start: no two acting at once, and each later term numbered higher. */
function overlapsAndOrder(sorted: ActingInterval[], election: string | undefined): string[] {
  const violations: string[] = [];
  const of = election === undefined ? '' : ` of ${election}`;
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j].start < sorted[i].end; j++) {
      violations.push(
        `overlap${of}: ${sorted[i].id} term ${sorted[i].term} acted until ${sorted[i].end}, ` +
          `${sorted[j].id} term ${sorted[j].term} from ${sorted[j].start} (${sorted[i].end - sorted[j].start} ms)`,
      );
    }
    if (i > 0 && sorted[i].term <= sorted[i - 1].term) {
      violations.push(
        `term did not increase${of}: ${sorted[i - 1].id}#${sorted[i - 1].term} then ${sorted[i].id}#${sorted[i].term}`,
      );
    }
  }
  return violations;
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
 * after the last successful acquire/renew *of its election* that arrived between the term's
 * acquire and the same instance's next term of that election. A send without an election (or a
 * term without one) matches every election of the instance: the single-election rule.
 */
function independentDeadlines(
  terms: ActingInterval[],
  evidence: SendEvidence,
  violations: string[],
): Map<string, number> {
  const bounds = new Map<string, number>();
  const sameElection = (a?: string, b?: string) => a === undefined || b === undefined || a === b;
  for (const [id, renewDeadlineMs] of evidence.renewDeadlineMs) {
    const elections = new Set(terms.filter((t) => t.id === id).map((t) => t.election));
    for (const election of elections) {
      const own = terms.filter((t) => t.id === id && t.election === election).sort((a, b) => a.start - b.start);
      const sends = evidence.sends
        .filter((s) => s.id === id && s.ok && sameElection(s.election, election))
        .sort((a, b) => a.at - b.at);
      own.forEach((term, index) => {
        const acquired = sends.filter((s) => s.op === 'acquire' && s.at <= term.start).at(-1);
        if (!acquired) {
          violations.push(
            `${termName(id, term.term, election)}: elected without a successful acquire in the proxy's log`,
          );
          bounds.set(termKey(term), term.start);
          return;
        }
        const next = own[index + 1]?.start ?? Number.POSITIVE_INFINITY;
        const last = sends.filter((s) => s.at >= acquired.at && s.at < next).at(-1) ?? acquired;
        bounds.set(termKey(term), last.at + renewDeadlineMs);
      });
    }
  }
  return bounds;
}
