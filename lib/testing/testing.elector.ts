import { type Observable, Subject } from 'rxjs';
import { electionMessages } from '../election/election.messages.js';
import type { ElectorHealth, ElectorState, ElectorStatus, LeadershipEvent, StopOptions } from '../election/elector.js';
import type { HandoverRequestOptions } from '../election/elector.types.js';
import { DEFAULT_TIMINGS, type ElectorTimings } from '../election/elector-options.js';
import { checkUserStateKey } from '../election/state-keys.js';
import type { LeaderElector } from '../leadership/leader-elector.interface.js';
import { leadershipMessages } from '../leadership/leadership.messages.js';
import { LeaseLostError, NoLeaderError } from '../shared/errors.js';
import type { HandoverRequest, LeaderStateEntry, LeaseMeta } from '../stores/lease-store.js';
import { decodeStateEntry, prepareStateWrite, stateKey } from '../stores/state-support.js';

const NEVER_ABORTED = new AbortController().signal;

/** The testing kit's stand-in for a store's name and limits, in state errors. */
const STATE_STORE = {
  name: 'LeaderElectionTestingModule',
  limits: { minLeaseDurationMs: 1, maxLeaseDurationMs: 1, reason: '' },
};

/**
 * An elector moved by hand (by {@link TestingLeadership}) instead of by a store and timers. It makes
 * the transitions of the real `Elector` in the same order with the same events — `elected` then
 * `leader-changed` on winning; the term's signal aborted, `revoked`, then `leader-changed` on losing —
 * so the real LeaderElectionService on top of it behaves as in production. Leadership never expires
 * by itself here: there is no deadline to miss in a test that does not ask for one.
 *
 * Leader state lives in memory, kept as JSON like a store does (a read never shares objects with
 * the writer), with the same rules: `writeState` when not leading rejects with `LeaseLostError`,
 * keys and the 64 KiB limit are checked as the built-in stores check them. It survives
 * elect/revoke, as state survives handovers.
 */
export class TestingElector implements LeaderElector {
  readonly timings: Readonly<ElectorTimings> = DEFAULT_TIMINGS;
  readonly events$: Observable<LeadershipEvent>;

  private readonly events = new Subject<LeadershipEvent>();
  private current: ElectorState = 'idle';
  private currentTerm?: number;
  private lastTerm = 0;
  private termController?: AbortController;
  private observedLeader?: string;
  private lastRenewAt?: number;
  private stopping?: Promise<void>;
  private readonly leaderState = new Map<string, string>();
  readonly supportsState = true;
  readonly supportsHandover = true;
  readonly leaderMeta: LeaseMeta | undefined = undefined;

  constructor(
    readonly election: string,
    readonly identity: string,
    private readonly leaderAtStart: boolean,
  ) {
    this.events$ = this.events.asObservable();
  }

  get state(): ElectorState {
    return this.current;
  }

  isLeader(): boolean {
    return this.current === 'leader';
  }

  get leaderId(): string | undefined {
    return this.isLeader() ? this.identity : this.observedLeader;
  }

  get term(): number | undefined {
    return this.isLeader() ? this.currentTerm : undefined;
  }

  get signal(): AbortSignal {
    if (this.isLeader() && this.termController) return this.termController.signal;
    return AbortSignal.abort(new DOMException(electionMessages.notLeading, 'AbortError'));
  }

  async readState<T = unknown>(key?: string): Promise<LeaderStateEntry<T> | undefined> {
    const name = stateKey({ key });
    const stored = this.leaderState.get(name);
    return stored === undefined
      ? undefined
      : (decodeStateEntry(STATE_STORE.name, this.election, name, stored) as LeaderStateEntry<T>);
  }

  async writeState<T = unknown>(value: T, key?: string): Promise<void> {
    checkUserStateKey(key);
    return this.writeTickRecord(value, key);
  }

  /** @internal The once-per-tick ledger's path (its `tick:` keys), fenced the same way. */
  async writeTickRecord<T = unknown>(value: T, key?: string): Promise<void> {
    const term = this.term;
    if (term === undefined) throw new LeaseLostError(electionMessages.stateNotLeader(this.election));
    const lease = { election: this.election, holder: this.identity, leaseId: String(term), term };
    const write = prepareStateWrite(STATE_STORE, lease, value, { key, signal: NEVER_ABORTED });
    this.leaderState.set(write.key, write.entry);
  }

  /** Like the real one, resolves after the "first acquire": won when the kit was told `leader: true`. */
  async start(): Promise<void> {
    if (this.current !== 'idle') throw new Error(electionMessages.alreadyStarted(this.election));
    this.current = 'follower';
    if (this.leaderAtStart) this.elect();
  }

  async resign(): Promise<void> {
    this.stepDown(electionMessages.reasonResigned);
  }

  /**
   * A handover as the real leader would make it, at once: when this instance leads, its term ends
   * and `to` (or nobody known) leads next; when another leads, it moves to `to` (the test stands in
   * for the other replicas). With nobody leading, it rejects as the real one does.
   */
  async requestHandover(options: HandoverRequestOptions = {}): Promise<HandoverRequest | undefined> {
    const leader = this.leaderId;
    if (leader === undefined) throw new NoLeaderError(this.election, electionMessages.handoverNoLeader(this.election));
    if (options.to === leader) return undefined;
    const request: HandoverRequest = {
      election: this.election,
      id: `testing-${this.lastTerm}`,
      term: this.lastTerm,
      requestedBy: options.requestedBy ?? this.identity,
      reason: options.reason ?? 'operator',
      requestedAt: Date.now(),
      ...(options.to === undefined ? {} : { to: options.to }),
    };
    this.setLeader(options.to);
    return request;
  }

  setLeaderships(): void {}

  stop(options: StopOptions = {}): Promise<void> {
    this.stopping ??= this.doStop(options);
    return this.stopping;
  }

  status(): ElectorStatus {
    const isLeader = this.isLeader();
    return {
      election: this.election,
      identity: this.identity,
      isLeader,
      leaderId: this.leaderId ?? null,
      term: this.term ?? null,
      state: this.current,
      lastRenewAt: this.lastRenewAt === undefined ? null : new Date(this.lastRenewAt).toISOString(),
      consecutiveFailures: 0,
      lastError: null,
      leaderAdvertise: null,
      leaderTerm: this.term ?? null,
      priority: 0,
      leaderPriority: this.leaderId === undefined ? null : 0,
    };
  }

  health(): ElectorHealth {
    if (this.current === 'idle' || this.current === 'stopped') {
      return { healthy: false, reason: electionMessages.notRunning(this.current) };
    }
    return { healthy: true };
  }

  /** Win a term: `term` (default: one more than the last); a no-op when already leading that term. */
  elect(term?: number): void {
    if (this.isLeader()) {
      if (term === undefined || term === this.currentTerm) return;
      // A new term is a new lease: the real elector only gets one after losing the old.
      this.stepDown(electionMessages.reasonLost);
    }
    term ??= this.lastTerm + 1;
    this.currentTerm = term;
    this.lastTerm = Math.max(this.lastTerm, term);
    this.lastRenewAt = Date.now();
    this.termController = new AbortController();
    this.current = 'leader';
    this.events.next({ type: 'elected', term, validUntil: this.lastRenewAt + this.timings.renewDeadlineMs });
    this.setObservedLeader(this.identity);
  }

  /** Lose the current term (no-op when not leading). */
  revoke(reason: string): void {
    this.stepDown(reason);
  }

  /** Another instance leads (`undefined`: no known leader); we lose our term first if we had one. */
  setLeader(identity: string | undefined): void {
    if (identity === this.identity) {
      this.elect();
      return;
    }
    this.stepDown(electionMessages.reasonLost);
    this.setObservedLeader(identity);
  }

  private stepDown(reason: string): void {
    const term = this.currentTerm;
    if (this.current !== 'leader' || term === undefined) return;
    this.current = 'follower';
    this.currentTerm = undefined;
    this.termController?.abort(new DOMException(electionMessages.termEnded(reason), 'AbortError'));
    this.termController = undefined;
    this.events.next({ type: 'revoked', term, reason });
    if (this.observedLeader === this.identity) this.setObservedLeader(undefined);
  }

  private setObservedLeader(leaderId: string | undefined): void {
    if (this.observedLeader === leaderId) return;
    this.observedLeader = leaderId;
    this.events.next({ type: 'leader-changed', leaderId });
  }

  private async doStop({ beforeRelease }: StopOptions): Promise<void> {
    if (this.current === 'idle') this.current = 'follower';
    this.stepDown(electionMessages.reasonStopped);
    try {
      await beforeRelease?.();
    } finally {
      this.current = 'stopped';
      this.events.complete();
    }
  }
}

/** @internal The testing electors of one app, by election: made by the service, moved by TestingLeadership. */
export class TestingElectors {
  /** By election, in the order the service made them: the first is the default election's. */
  private readonly electors = new Map<string, TestingElector>();

  constructor(
    private readonly identity: string,
    private readonly leaderAtStart: boolean,
  ) {}

  create(election: string): TestingElector {
    const elector = new TestingElector(election, this.identity, this.leaderAtStart);
    this.electors.set(election, elector);
    return elector;
  }

  /** The elector of `election` (default: the default election); an unknown name throws, naming the ones there are. */
  get(election: string | undefined, method: string): TestingElector {
    const elector = election === undefined ? this.electors.values().next().value : this.electors.get(election);
    if (!elector) {
      throw new Error(
        leadershipMessages.unknownElection(`TestingLeadership.${method}()`, String(election), [
          ...this.electors.keys(),
        ]),
      );
    }
    return elector;
  }
}
