import type { ClockTimer } from '../shared/clock.js';
import { type LeaseStoreError, toLeaseStoreError } from '../shared/errors.js';
import type { HandoverRequest, LeaderStateEntry, LeaseWatch } from '../stores/lease-store.js';
import { BoundedElectorCalls } from './bounded-calls.js';
import { electionMessages as messages } from './election.messages.js';
import type { HandoverRequestOptions, StopOptions } from './elector.types.js';
import { callTimeoutMs, handoverReserveMs } from './elector-options.js';
import { type ExpiryHint, nextTickDelayMs, spreadWouldAsk } from './follower-schedule.js';
import { HandoverDesk } from './handover.js';
import type { LoopCalls, LoopDeps } from './loop-deps.js';
import { RenewalExchange, type RenewalRider } from './renewal.js';
import { type StandbySlots, standbySlotsFor } from './standby.js';
import { LeaderStateCalls } from './state-calls.js';
import { type SentAt, sentNow, Term } from './term.js';

/**
 * The follower ⇄ leader loop behind {@link Elector}: one store call at a time (acquire as a
 * follower, renew as a leader), driving the term keeper's transitions; sitting out, leaving, stopping.
 * When to call next is follower-schedule.ts (pure); the handover desk hears of each term.
 */
export class ElectionLoop {
  private readonly stopController = new AbortController();
  private readonly calls: BoundedElectorCalls;
  /** A follower's call (and a release) must end early enough that a win still leaves time to renew. */
  private readonly callTimeoutMs: number;
  private readonly handovers: HandoverDesk;
  private readonly leaderState: LeaderStateCalls;
  private readonly renewal: RenewalExchange;
  /** With `activeFollowers`: the candidate slot that makes this follower an active one. */
  private readonly slots?: StandbySlots;
  private lastRenewSentAt?: number;
  private contendNotBefore = 0;
  /** Bumped by `resign()`: an acquire sent before it must not make us leader. */
  private resignations = 0;
  private tickTimer?: ClockTimer;
  private inFlight?: Promise<void>;
  private pushPending = false;
  private watchHandle?: LeaseWatch;
  private expiryHint?: ExpiryHint;

  constructor(private readonly d: LoopDeps) {
    this.callTimeoutMs = callTimeoutMs(d.timings);
    const stopSignal = this.stopController.signal;
    this.calls = new BoundedElectorCalls(d.store, d.election, d.clock, d.logger, stopSignal, this.callTimeoutMs, {
      identity: d.identity,
      term: () => d.terms.term?.lease.term,
    });
    const lent: LoopCalls = { calls: this.calls, stopSignal, callTimeoutMs: this.callTimeoutMs };
    this.slots = standbySlotsFor(d, lent, () => this.onPollModeChange());
    this.renewal = new RenewalExchange(d, lent);
    this.handovers = new HandoverDesk(d, lent, this.slots, this.leave.bind(this), this.renewal.readEvery);
    d.terms.listen(this.handovers, (lease, release) => {
      // A stale lease in the store would only delay the next leader: hand it back, best effort.
      if (release) void this.calls.release(lease);
      if (!this.stopController.signal.aborted) this.slots?.contend();
      this.scheduleNext();
    });
    this.leaderState = new LeaderStateCalls(d, lent, d.terms);
  }

  /** What rides on our renewals (see renewal.ts); the function returned takes it off. */
  carry(rider: RenewalRider): () => void {
    return this.renewal.carry(rider);
  }

  async start(): Promise<void> {
    this.d.terms.follow();
    this.watchHandle = this.calls.openWatch(() => this.onMayBeFree());
    await this.runTick();
    if (this.d.terms.state === 'follower' && !this.stopController.signal.aborted) this.slots?.contend();
  }

  /** Resolves once our lease is released, or once an acquire in flight has ended (a win handed back). */
  resign(): Promise<void> {
    return this.leave(messages.reasonResigned, ...this.handovers.resignation());
  }

  /**
   * Steps down and releases (reserving the lease for `to()`, asked once `beforeRelease` is over, when
   * it names one), then sits out one round: `resign()`, and the end of an honoured handover request.
   */
  private async leave(reason: string, to?: () => string | undefined, beforeRelease?: () => unknown): Promise<void> {
    const lease = this.d.terms.term?.lease;
    this.contendNotBefore = this.d.clock.now() + 2 * this.d.timings.retryIntervalMs;
    this.resignations += 1;
    if (!lease || this.d.terms.state !== 'leader') {
      // A poll already scheduled would not sit the round out: move it past contendNotBefore.
      if (this.d.terms.state === 'follower' && !this.inFlight) this.scheduleNext();
      await this.inFlight;
      return;
    }
    this.d.terms.stepDown(reason, false);
    try {
      await beforeRelease?.();
    } finally {
      const reserveMs = handoverReserveMs(this.d.timings, this.d.standby);
      const handoverTo = to?.();
      await this.calls.release(lease, handoverTo === undefined ? undefined : { handoverTo, reserveMs });
      this.scheduleNext();
    }
  }

  /** Became active or standby: the next poll comes on the new schedule. */
  private onPollModeChange(): void {
    if (this.d.terms.state === 'follower' && !this.inFlight) this.scheduleNext();
  }

  /** Handover requests and leader state: see handover.ts and state-calls.ts. */
  requestHandover(options: HandoverRequestOptions): Promise<HandoverRequest | undefined> {
    return this.handovers.requestHandover(options);
  }

  writeState(value: unknown, key: string | undefined): Promise<void> {
    return this.leaderState.write(value, key);
  }

  readState(key: string | undefined): Promise<LeaderStateEntry | undefined> {
    return this.leaderState.read(key);
  }

  async stop({ release = true, beforeRelease }: StopOptions): Promise<void> {
    this.d.terms.follow();
    const lease = this.d.terms.state === 'leader' ? this.d.terms.term?.lease : undefined;
    // Abort first so stepping down schedules nothing and in-flight calls settle at once (an
    // acquire that ignores its signal is waited for below, and its win released).
    this.stopController.abort(new DOMException(messages.reasonStopped, 'AbortError'));
    this.d.terms.stepDown(messages.reasonStopped, false);
    this.clearTickTimer();
    // Closed alongside the rest (the abort above already silenced it): bounded, and not in series.
    const unwatched = this.calls.closeWatch(this.watchHandle);
    await this.inFlight?.catch(() => undefined);
    try {
      await beforeRelease?.();
    } finally {
      if (lease && release) await this.calls.release(lease);
      await this.slots?.withdraw();
      await this.calls.drain(this.callTimeoutMs);
      await unwatched;
      this.clearTickTimer();
      this.d.terms.stopped();
      this.d.events.complete();
    }
  }

  private runTick(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    this.clearTickTimer();
    const tick = (
      this.d.terms.state === 'leader'
        ? this.renewOnce()
        : this.d.clock.now() < this.contendNotBefore
          ? this.observeOnce()
          : this.acquireOnce()
    ).finally(() => {
      this.inFlight = undefined;
      this.scheduleNext();
    });
    this.inFlight = tick;
    return tick;
  }

  private scheduleNext(): void {
    if (this.stopController.signal.aborted || this.inFlight) return;
    const { clock, timings, standby } = this.d;
    const delay = nextTickDelayMs({
      ...timings,
      now: clock.now(),
      leading: this.d.terms.state === 'leader',
      lastRenewSentAt: this.lastRenewSentAt,
      pushPending: this.pushPending,
      contendNotBefore: this.contendNotBefore,
      ...(standby && this.slots?.standingBy() ? { standby } : {}),
      watching: this.watchHandle !== undefined,
      hint: this.expiryHint,
      spreadWouldAsk: spreadWouldAsk(this.d.meta.leaderships, this.d.observed.meta),
      random: Math.random,
    });
    this.pushPending = false;
    this.expiryHint = undefined;
    this.clearTickTimer();
    this.tickTimer = clock.setTimeout(() => {
      this.tickTimer = undefined;
      void this.runTick();
    }, delay);
  }

  /** While sitting out: learn who leads (and its meta) without contending. */
  private async observeOnce(): Promise<void> {
    const { store, election } = this.d;
    try {
      const info = await this.calls.call('read', this.callTimeoutMs, (signal) => store.read(election, { signal }));
      this.d.observed.set(info.held ? info.holder : undefined, info.term, info.meta);
    } catch {
      // Only an observation: the acquire after the sit-out reports store trouble.
    }
  }

  private async acquireOnce(): Promise<void> {
    const { clock, store, timings } = this.d;
    const sent = sentNow(clock);
    const resignations = this.resignations;
    const meta = this.d.meta.current(this.handovers.isPinned());
    try {
      const result = await this.calls.call(
        'acquire',
        this.callTimeoutMs,
        (signal) =>
          store.acquire({
            election: this.d.election,
            identity: this.d.identity,
            leaseDurationMs: timings.leaseDurationMs,
            signal,
            meta,
          }),
        // An acquire we stopped waiting for may still have won: hand that lease back.
        (late) => (late.acquired ? this.calls.release(late.lease) : undefined),
      );
      this.d.failures.noteSuccess();
      if (!result.acquired) {
        const inMs = result.expiresInMs;
        if (typeof inMs === 'number' && Number.isFinite(inMs)) this.expiryHint = { inMs, at: clock.now() };
        this.d.observed.set(result.holder, result.term, result.meta);
        return;
      }
      this.d.meta.acquiredWith(meta);
      const term = new Term(result.lease, sent, clock, timings.renewDeadlineMs);
      // Won, but too late to act on it, or we stopped or resigned meanwhile: hand it straight back.
      if (this.stopController.signal.aborted || resignations !== this.resignations || term.isOver()) {
        await this.calls.release(result.lease);
        return;
      }
      this.becomeLeader(term, sent);
    } catch (error) {
      this.noteFailure(toLeaseStoreError(error), sent.mono);
    }
  }

  private async renewOnce(): Promise<void> {
    const term = this.d.terms.term;
    if (!term || this.d.terms.checkDeadline()) return;
    const sent = sentNow(this.d.clock);
    this.lastRenewSentAt = sent.mono;
    const meta = this.d.meta.renewal(this.d.meta.current(this.handovers.isPinned()));
    try {
      // The call may not outlive our leadership: we stop waiting at the deadline at the latest.
      const renewal = await this.renewal.send(term, meta.changed, this.handovers.wantsRequest());
      this.d.failures.noteSuccess();
      meta.taken();
      if (this.d.terms.term !== term || this.d.terms.checkDeadline()) {
        this.renewal.abandon(renewal);
        return;
      }
      term.extend(sent);
      await this.d.terms.renewed(term, this.renewal.settle(term, renewal));
    } catch (raw) {
      const error = toLeaseStoreError(raw);
      if (error.kind === 'lost') {
        this.d.failures.noteSuccess();
        if (this.d.terms.term !== term) return;
        this.d.terms.stepDown(messages.reasonLost, false);
        return;
      }
      // Counted even when the deadline timer ended the term first: the store did fail.
      this.noteFailure(error, sent.mono, false);
      if (this.d.terms.term === term && !this.d.terms.checkDeadline()) {
        this.d.logger.warn(messages.renewFailed(this.d.election, error.message, term.remainingMs()));
      }
    }
  }

  private becomeLeader(term: Term, sent: SentAt): void {
    this.lastRenewSentAt = sent.mono;
    this.d.terms.elected(term);
    this.d.observed.set(this.d.identity, term.lease.term, this.d.meta.current(this.handovers.isPinned()));
    // A leader needs no slot: hand it to a standby so the election keeps its active followers.
    void this.slots?.withdraw();
  }

  private onMayBeFree(): void {
    if (this.d.terms.state !== 'follower' || this.stopController.signal.aborted) return;
    if (this.d.clock.now() < this.contendNotBefore) return;
    // A release wakes every follower: only the active ones answer, so a big fleet does not stampede.
    if (this.slots?.standingBy()) return;
    if (this.inFlight) {
      this.pushPending = true;
      return;
    }
    void this.runTick();
  }

  private noteFailure(error: LeaseStoreError, sentAt: number, log = true): void {
    if (this.stopController.signal.aborted) return;
    this.d.failures.noteFailure(error, sentAt, log);
  }

  private clearTickTimer(): void {
    if (this.tickTimer !== undefined) this.d.clock.clearTimeout(this.tickTimer);
    this.tickTimer = undefined;
  }
}
