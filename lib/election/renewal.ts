import { type LeaseStoreError, TransientLeaseStoreError, toLeaseStoreError } from '../shared/errors.js';
import { supportsRecords, supportsRenewWith, supportsState } from '../stores/lease-store.capabilities.js';
import type { HandoverRequest, LeaseMeta, RenewOptions, SharedRecord, StateWrite } from '../stores/lease-store.js';
import { electionMessages as messages } from './election.messages.js';
import type { LoopCalls, LoopDeps } from './loop-deps.js';
import { readPendingRequest } from './pending-operator.js';
import type { Term } from './term.js';
import type { Learned } from './term-keeper.js';

/**
 * What rides on the leader's renewals, for a piece beside the elector (job control): writes to carry
 * and records to bring back. `load` runs just before each renewal is sent; `unload` once per load,
 * whatever became of the renewal.
 */
export interface RenewalRider {
  /**
   * What the renewal of `term` should bring back (shared records, asked on a read turn) and carry
   * (leader-state writes, fenced like `writeState`, asked on a write turn). Synchronous and cheap.
   */
  load(term: number, turn: RenewalTurn): RenewalLoad | undefined;
  /** What became of the load. */
  unload(term: number, outcome: RenewalOutcome): void;
}

/**
 * What a renewal does beside renewing: read on every Nth renewal; write on every renewal of a store
 * that folds (free: the same call), on the read turns otherwise (each write is a call of its own).
 */
export interface RenewalTurn {
  read: boolean;
  write: boolean;
}

export interface RenewalLoad {
  writeState?: StateWrite[];
  readRecords?: string[];
}

export interface RenewalOutcome {
  /** The records asked for, each null when absent; undefined when they were not read (see `readError`). */
  records?: Record<string, SharedRecord | null>;
  /** Why the separate read of the records failed (a store that does not fold). */
  readError?: LeaseStoreError;
  /** The writes that did not land, by key, with why (all of them when the renewal failed: nothing was read then). */
  writeErrors?: Map<string, LeaseStoreError>;
}

/** One renewal in flight: what it carries, and what the folded call brought back. */
export interface SentRenewal {
  term: number;
  loads: Array<[RenewalRider, RenewalLoad | undefined]>;
  writes: StateWrite[];
  records: string[];
  readHandover: boolean;
  /** The folded call's reply; undefined when the store renewed alone (the separate calls follow). */
  folded?: { handover?: HandoverRequest | null; records?: Record<string, SharedRecord | null> };
}

/**
 * The leader's renewal and what rides on it (issue 29): ONE store call per renewal where the store
 * folds (`renewWith`); otherwise the renew, then the separate calls (`readHandover`, `readRecord`,
 * `writeState`), as a store without the capability always had. Reads come every Nth renewal of a
 * term (`readEveryNthRenewal`, 1 unless the store bills each read); writes with every renewal of a
 * store that folds, with the reads otherwise (see RenewalTurn).
 */
export class RenewalExchange {
  private readonly riders = new Set<RenewalRider>();
  /** Renewals sent in `countedTerm`, for the read turns. */
  private sent = 0;
  private countedTerm?: number;
  /** Reads every Nth renewal: the handover desk's and the job board's latency bound in renew intervals. */
  readonly readEvery: number;
  /** False once the store refused a folded renewal as fatal: renew alone, then the separate calls. */
  private folding = true;
  /** The riders' separate calls after a renewal on a store that does not fold, while under way. */
  private riding?: Promise<void>;

  constructor(
    private readonly d: Pick<LoopDeps, 'store' | 'election' | 'logger' | 'timings'>,
    private readonly lent: LoopCalls,
  ) {
    const every = d.store.readEveryNthRenewal ?? 1;
    if (!Number.isInteger(every) || every < 1 || every > 20) {
      throw new RangeError(messages.readEveryNth(d.store.name, every));
    }
    this.readEvery = every;
  }

  /** Adds a rider; the function returned takes it off. */
  carry(rider: RenewalRider): () => void {
    this.riders.add(rider);
    return () => this.riders.delete(rider);
  }

  /**
   * Sends the renewal of `term` (bounded by the term's remaining time), carrying the riders' loads
   * (and asking for the pending handover request when `readHandover`) on a store that folds. Throws
   * what the renew threw, after unloading the riders.
   */
  async send(term: Term, meta: LeaseMeta | undefined, wantsHandover: boolean): Promise<SentRenewal> {
    const { store, timings } = this.d;
    const number = term.lease.term;
    if (this.countedTerm !== number) {
      this.countedTerm = number;
      this.sent = 0;
    }
    this.sent += 1;
    const readTurn = (this.sent - 1) % this.readEvery === 0;
    const turn = { read: readTurn, write: readTurn || (this.folding && supportsRenewWith(store)) };
    // The riders' separate calls of an earlier renewal still under way: this one carries nothing.
    const riders = this.riding ? [] : [...this.riders];
    const loads = riders.map((rider): SentRenewal['loads'][number] => [rider, rider.load(number, turn)]);
    const writes = new Map<string, StateWrite>();
    const records = new Set<string>();
    for (const [, load] of loads) {
      for (const write of load?.writeState ?? []) writes.set(write.key, write);
      if (readTurn) for (const key of load?.readRecords ?? []) records.add(key);
    }
    const sent: SentRenewal = {
      term: number,
      loads,
      writes: supportsState(store) ? [...writes.values()] : [],
      records: [...records],
      readHandover: readTurn && wantsHandover,
    };
    const extras = sent.writes.length > 0 || sent.records.length > 0 || sent.readHandover;
    const base = { leaseDurationMs: timings.leaseDurationMs, ...(meta ? { meta } : {}) };
    try {
      if (extras && this.folding && supportsRenewWith(store)) {
        try {
          sent.folded = await this.lent.calls.call('renew', term.remainingMs(), (signal) =>
            store.renewWith(term.lease, {
              ...base,
              signal,
              ...(sent.writes.length > 0 ? { writeState: sent.writes } : {}),
              ...(sent.readHandover ? { readHandover: true } : {}),
              ...(sent.records.length > 0 ? { readRecords: sent.records } : {}),
            }),
          );
          return sent;
        } catch (raw) {
          // A part the store cannot serve (a table an older version made, a permission missing)
          // must not cost the renewal: renew alone now, and if that works, from now on (the
          // separate calls then report each part's own error, as on a store that never folded).
          const error = toLeaseStoreError(raw);
          if (error.kind !== 'fatal') throw raw;
          await this.renewAlone(term, base);
          this.folding = false;
          this.d.logger.warn(messages.foldingOff(this.d.election, error.message));
          return sent;
        }
      }
      await this.renewAlone(term, base);
    } catch (raw) {
      // A failed renewal read nothing: the next one takes its turn (a request waits no longer).
      this.sent -= 1;
      this.failed(sent, toLeaseStoreError(raw));
      throw raw;
    }
    return sent;
  }

  /**
   * After a renewal that counted (the term extended): what a folded call brought back, or the
   * separate calls a store that does not fold needs. Unloads the riders; resolves with what the
   * handover desk should judge. Never rejects.
   */
  async settle(term: Term, sent: SentRenewal): Promise<Learned> {
    if (sent.folded) {
      const { handover, records } = sent.folded;
      for (const [rider, load] of sent.loads) if (load) rider.unload(term.lease.term, records ? { records } : {});
      return handover === undefined ? {} : { handover };
    }
    // The riders' calls run beside the loop, as job control's own calls always did: on a slow store
    // (each write a read and a conditional put on Azure) they must never hold the next renewal back.
    // Until they are done, the next renewals carry nothing (see `send`).
    if (sent.loads.some(([, load]) => load)) {
      const riding = this.rideSeparately(term, sent).finally(() => {
        if (this.riding === riding) this.riding = undefined;
      });
      this.riding = riding;
    }
    const handover = sent.readHandover ? await this.readHandover(term) : undefined;
    return handover === undefined ? {} : { handover };
  }

  private async rideSeparately(term: Term, sent: SentRenewal): Promise<void> {
    const [read, writeErrors] = await Promise.all([
      this.readRecords(term, sent.records),
      this.writeSeparately(term, sent.writes),
    ]);
    for (const [rider, load] of sent.loads) {
      if (!load) continue;
      rider.unload(term.lease.term, { ...read, ...(writeErrors.size > 0 ? { writeErrors } : {}) });
    }
  }

  /**
   * The renewal came back after the term ended: what a folded call wrote did land (the lease was
   * still ours), what it read is of no use; a plain renewal's separate calls are not made.
   */
  abandon(sent: SentRenewal): void {
    if (!sent.folded) {
      this.failed(sent, new TransientLeaseStoreError(messages.reasonDeadline));
      return;
    }
    for (const [rider, load] of sent.loads) if (load) rider.unload(sent.term, {});
  }

  /** The renewal failed: nothing read, nothing written. */
  failed(sent: SentRenewal, error: LeaseStoreError): void {
    const writeErrors = new Map(sent.writes.map((write) => [write.key, error]));
    for (const [rider, load] of sent.loads) {
      if (load) rider.unload(sent.term, { writeErrors });
    }
  }

  private renewAlone(term: Term, base: Omit<RenewOptions, 'signal'>): Promise<void> {
    const { store } = this.d;
    return this.lent.calls.call('renew', term.remainingMs(), (signal) => store.renew(term.lease, { ...base, signal }));
  }

  private bound(term: Term): number {
    return Math.min(this.lent.callTimeoutMs, term.remainingMs());
  }

  /** One read; a failure waits for the next read turn (undefined). */
  private readHandover(term: Term): Promise<HandoverRequest | null | undefined> {
    return readPendingRequest(this.d, this.lent, this.bound(term));
  }

  private async readRecords(term: Term, keys: string[]): Promise<Pick<RenewalOutcome, 'records' | 'readError'>> {
    const { store, election } = this.d;
    if (keys.length === 0 || !supportsRecords(store)) return {};
    try {
      const entries = await Promise.all(
        keys.map(async (key) => {
          const record = await this.lent.calls.call('readRecord', this.bound(term), (signal) =>
            store.readRecord(election, key, { signal }),
          );
          return [key, record ?? null] as const;
        }),
      );
      return { records: Object.fromEntries(entries) };
    } catch (raw) {
      return { readError: toLeaseStoreError(raw) };
    }
  }

  /** Each write on its own, fenced by the term's lease; the map holds those that failed. */
  private async writeSeparately(term: Term, writes: StateWrite[]): Promise<Map<string, LeaseStoreError>> {
    const failed = new Map<string, LeaseStoreError>();
    const { store } = this.d;
    if (writes.length === 0 || !supportsState(store)) return failed;
    await Promise.all(
      writes.map(async ({ key, value }) => {
        try {
          await this.lent.calls.call('writeState', term.remainingMs(), (signal) =>
            store.writeState(term.lease, value, { signal, key }),
          );
        } catch (raw) {
          failed.set(key, toLeaseStoreError(raw));
        }
      }),
    );
    return failed;
  }
}
