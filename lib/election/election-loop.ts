import type { Subject } from 'rxjs';
import { messages } from '../messages/leader-election.messages.js';
import type { Clock, ClockTimer } from '../shared/clock.js';
import {
  type HandoverRequest,
  type LeaderStateEntry,
  LeaseLostError,
  type LeaseMeta,
  type LeaseStore,
  type LeaseStoreError,
  type LeaseWatch,
  stateUnsupportedError,
  supportsState,
  toLeaseStoreError,
} from '../stores/lease-store.js';
import type {
  ElectorLogger,
  ElectorState,
  HandoverHooks,
  HandoverRequestOptions,
  LeadershipEvent,
  StopOptions,
} from './elector.types.js';
import { type ElectorTimings, handoverReserveMs, type StandbyTimings } from './elector-options.js';
import type { FailureLog } from './failure-log.js';
import { HandoverDesk } from './handover.js';
import { StandbySlots, standbySlotLeaseMs } from './standby.js';
import { ElectorCalls } from './store-calls.js';
import { type SentAt, sentNow, Term } from './term.js';

const JITTER = 0.15;

export interface LoopDeps {
  store: LeaseStore;
  election: string;
  identity: string;
  timings: Readonly<ElectorTimings>;
  clock: Clock;
  logger: ElectorLogger;
  events: Subject<LeadershipEvent>;
  failures: FailureLog;
  advertise?: string;
  handover?: HandoverHooks;
  handoverHoldMs: number;
  standby?: StandbyTimings;
}

/**
 * The follower ⇄ leader loop behind {@link Elector}: one store call at a time (acquire as a
 * follower, renew as a leader), the term it holds, stepping down and stopping.
 */
export class ElectionLoop {
  state: ElectorState = 'idle';
  term?: Term;
  observedLeader?: string;
  /** Wall-clock time of the last successful acquire/renew. */
  lastRenewAt?: number;

  private readonly stopController = new AbortController();
  private readonly calls: ElectorCalls;
  private lastRenewSentAt?: number;
  private contendNotBefore = 0;
  /** Bumped by `resign()`: an acquire sent before it must not make us leader. */
  private resignations = 0;
  private tickTimer?: ClockTimer;
  private inFlight?: Promise<void>;
  private pushPending = false;
  private watchHandle?: LeaseWatch;
  /** The holder's remaining lease as the store last told (a hint), and when we heard it (monotonic). */
  private expiryHint?: { inMs: number; at: number };
  /** What the holder published with its lease, as last observed (ours while we lead). */
  observedMeta?: LeaseMeta;
  /** The holder's term as last observed (ours while we lead). */
  observedTerm?: number;
  /** How many elections this replica leads (spread sets it; published in our lease meta). */
  private leaderships?: number;
  /** The meta our lease carries in the store, as JSON, so a renew sends it only when it changed. */
  private storedMeta?: string;
  private readonly handovers: HandoverDesk;
  /** With `activeFollowers`: the candidate slot that makes this follower an active one. */
  private readonly slots?: StandbySlots;
  /** Until then (monotonic) we poll as an active follower anyway: we asked for a handover to us. */
  private activeUntil = 0;

  constructor(private readonly d: LoopDeps) {
    this.calls = new ElectorCalls(
      d.store,
      d.election,
      d.clock,
      d.logger,
      this.stopController.signal,
      this.callTimeoutMs,
    );
    this.handovers = new HandoverDesk(d, this.calls, this.stopController, this.callTimeoutMs, {
      state: () => this.state,
      term: () => this.term,
      leaderships: () => this.leaderships,
      leave: (reason, to, beforeRelease) => this.leave(reason, to, beforeRelease),
    });
    if (d.standby) {
      this.slots = new StandbySlots({
        store: d.store,
        election: d.election,
        identity: d.identity,
        clock: d.clock,
        logger: d.logger,
        calls: this.calls,
        slots: d.standby.activeFollowers,
        pollMs: d.standby.standbyPollMs,
        slotLeaseMs: standbySlotLeaseMs(d.store, d.timings.leaseDurationMs),
        callTimeoutMs: this.callTimeoutMs,
        onChange: () => this.onPollModeChange(),
      });
    }
  }

  /** A follower's call must end early enough that a win still leaves time to renew. */
  private get callTimeoutMs(): number {
    return this.d.timings.renewDeadlineMs - this.d.timings.renewIntervalMs;
  }

  async start(): Promise<void> {
    this.state = 'follower';
    this.openWatch();
    await this.runTick();
    if (this.state === 'follower' && !this.stopController.signal.aborted) this.slots?.contend();
  }

  /** Resolves once our lease is released, or once an acquire in flight has ended (a win handed back). */
  resign(): Promise<void> {
    return this.leave(messages.reasonResigned);
  }

  /**
   * Steps down and releases (reserving the lease for `to` when given), then sits out one round:
   * `resign()`, and the end of an honoured handover request.
   */
  private async leave(reason: string, to?: string, beforeRelease?: () => Promise<unknown> | unknown): Promise<void> {
    const lease = this.term?.lease;
    this.contendNotBefore = this.d.clock.now() + 2 * this.d.timings.retryIntervalMs;
    this.resignations += 1;
    if (!lease || this.state !== 'leader') {
      // A poll already scheduled would not sit the round out: move it past contendNotBefore.
      if (this.state === 'follower' && !this.inFlight) this.scheduleNext();
      await this.inFlight;
      return;
    }
    this.stepDown(reason, false);
    try {
      await beforeRelease?.();
    } finally {
      const reservation = to === undefined ? undefined : { handoverTo: to, reserveMs: this.reserveMs };
      await this.calls.release(lease, reservation);
      this.scheduleNext();
    }
  }

  /** Spread: how many elections this replica leads, published with our lease from the next renewal. */
  setLeaderships(count: number | undefined): void {
    this.leaderships = count;
  }

  /** What our lease carries: where to reach us, and spread's counters; undefined when nothing. */
  private meta(): LeaseMeta | undefined {
    const meta: LeaseMeta = {};
    if (this.d.advertise !== undefined) meta.advertise = this.d.advertise;
    if (this.leaderships !== undefined) meta.leaderships = this.leaderships;
    if (this.d.clock.now() < this.handovers.pinnedUntil) meta.pinned = true;
    return Object.keys(meta).length > 0 ? meta : undefined;
  }

  /**
   * How long a directed handover keeps the freed lease for the named replica: one lease, or, with
   * standby followers, until a standby heir's next poll has come (it polls every `standbyPollMs`).
   */
  private get reserveMs(): number {
    return handoverReserveMs(this.d.timings, this.d.standby);
  }

  /** See {@link HandoverDesk.requestHandover}. Asking for the lease ourselves, we poll as an active follower until it comes. */
  async requestHandover(options: HandoverRequestOptions): Promise<HandoverRequest | undefined> {
    const request = await this.handovers.requestHandover(options);
    if (this.slots && request?.to === this.d.identity) {
      this.activeUntil = this.d.clock.now() + this.d.timings.renewIntervalMs + this.reserveMs;
      this.onPollModeChange();
    }
    return request;
  }

  /** A standby follower: with `activeFollowers`, holding no slot and not awaiting a handover to us. */
  private get standingBy(): boolean {
    return this.slots !== undefined && !this.slots.isActive() && this.d.clock.now() >= this.activeUntil;
  }

  /** Became active or standby: the next poll comes on the new schedule. */
  private onPollModeChange(): void {
    if (this.state === 'follower' && !this.inFlight) this.scheduleNext();
  }

  /** Steps down if leading past the deadline; true when it did (or had already). */
  checkDeadline(): boolean {
    if (this.state !== 'leader') return false;
    if (this.term && !this.term.isOver()) return false;
    this.stepDown(messages.reasonDeadline, true);
    return true;
  }

  /**
   * Leader state, written with the current lease so the store refuses it once the lease is not
   * ours. Rejects at once (nothing sent) when not leading or past the deadline; the call is bounded
   * by the term's remaining time, like a renew. A `LeaseLostError` from the store ends the term.
   */
  async writeState(value: unknown, key: string | undefined): Promise<void> {
    const { store, election } = this.d;
    if (!supportsState(store)) throw stateUnsupportedError(store);
    const term = this.state === 'leader' && !this.checkDeadline() ? this.term : undefined;
    if (!term) throw new LeaseLostError(messages.stateNotLeader(election));
    try {
      await this.calls.call(term.remainingMs(), (signal) =>
        store.writeState(term.lease, value, key === undefined ? { signal } : { signal, key }),
      );
    } catch (error) {
      // The store judged our lease gone: the term is over here too (a renew would say the same).
      if (error instanceof LeaseLostError && this.term === term) this.stepDown(messages.reasonLost, false);
      throw error;
    }
  }

  /** Any replica may read; bounded like a follower's call. */
  async readState(key: string | undefined): Promise<LeaderStateEntry | undefined> {
    const { store, election } = this.d;
    if (!supportsState(store)) throw stateUnsupportedError(store);
    return this.calls.call(this.callTimeoutMs, (signal) =>
      store.readState(election, key === undefined ? { signal } : { signal, key }),
    );
  }

  async stop({ release = true, beforeRelease }: StopOptions): Promise<void> {
    if (this.state === 'idle') this.state = 'follower';
    const lease = this.state === 'leader' ? this.term?.lease : undefined;
    // Abort first so stepping down schedules nothing and in-flight calls settle at once (an
    // acquire that ignores its signal is waited for below, and its win released).
    this.stopController.abort(new DOMException(messages.reasonStopped, 'AbortError'));
    this.stepDown(messages.reasonStopped, false);
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
      this.term?.disarm();
      this.state = 'stopped';
      this.d.events.complete();
    }
  }

  private runTick(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    this.clearTickTimer();
    const tick = (
      this.state === 'leader'
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
    const { clock, timings } = this.d;
    let delay: number;
    if (this.state === 'leader') {
      delay = timings.renewIntervalMs - (clock.now() - (this.lastRenewSentAt ?? 0));
      delay = Math.min(Math.max(0, delay), timings.renewIntervalMs);
    } else if (this.pushPending && clock.now() >= this.contendNotBefore) {
      delay = 0;
    } else {
      // Sitting out (resigned, handed over): polls that fall inside only read who leads now; the
      // first acquire comes when the sit-out ends.
      const sitOutMs = this.contendNotBefore - clock.now();
      delay = Math.min(this.followerDelay(), Math.max(0, sitOutMs));
      if (sitOutMs <= 0) delay = this.followerDelay();
    }
    this.pushPending = false;
    this.expiryHint = undefined;
    this.clearTickTimer();
    this.tickTimer = clock.setTimeout(() => {
      this.tickTimer = undefined;
      void this.runTick();
    }, delay);
  }

  /**
   * A follower's next try. Without a watch, or without the store's expiry hint: every retry
   * interval (±15 %). With both, a release wakes us through the watch, so a poll is needed only
   * for what the watch does not report — the holder's lease expiring (a crash) — and as a safety
   * net for a lost notification: we try again just after the holder's lease can have expired
   * (0.15–0.3 × min(retry, lease) after the hinted expiry: spread, and never a hot loop on a store
   * that keeps answering 0), and at least every max(retry, lease) ±15 %. Crash failover stays
   * within lease + retry; the hint only schedules, the acquire itself is judged by the store.
   * A standby follower (`activeFollowers`, no slot) polls every `standbyPollMs` whatever the store.
   */
  private followerDelay(): number {
    const { clock, timings } = this.d;
    const jitter = (ms: number): number => ms * (1 + (Math.random() * 2 - 1) * JITTER);
    if (this.standingBy) return jitter(this.d.standby?.standbyPollMs ?? timings.retryIntervalMs);
    const hint = this.expiryHint;
    if (!this.watchHandle || !hint || this.spreadWouldAsk()) return jitter(timings.retryIntervalMs);
    const untilExpiry = Math.max(0, hint.inMs - (clock.now() - hint.at));
    const afterExpiry = Math.min(timings.retryIntervalMs, timings.leaseDurationMs) * JITTER * (1 + Math.random());
    return Math.min(untilExpiry + afterExpiry, jitter(Math.max(timings.retryIntervalMs, timings.leaseDurationMs)));
  }

  /**
   * Spread may ask this holder for its lease (it leads at least 2 more than we do, unpinned): keep
   * its lease meta fresh by polling every retry interval rather than on the expiry hint.
   */
  private spreadWouldAsk(): boolean {
    const theirs = this.observedMeta?.leaderships;
    return (
      this.leaderships !== undefined &&
      theirs !== undefined &&
      theirs >= this.leaderships + 2 &&
      this.observedMeta?.pinned !== true
    );
  }

  /** While sitting out: learn who leads (and its meta) without contending. */
  private async observeOnce(): Promise<void> {
    const { store, election } = this.d;
    try {
      const info = await this.calls.call(this.callTimeoutMs, (signal) => store.read(election, { signal }));
      this.setObservedLeader(info.held ? info.holder : undefined, info.term, info.meta);
    } catch {
      // Only an observation: the acquire after the sit-out reports store trouble.
    }
  }

  private async acquireOnce(): Promise<void> {
    const { clock, store, timings } = this.d;
    const sent = sentNow(clock);
    const resignations = this.resignations;
    const meta = this.meta();
    try {
      const result = await this.calls.call(
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
        this.setObservedLeader(result.holder, result.term, result.meta);
        return;
      }
      this.storedMeta = meta && JSON.stringify(meta);
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
    const term = this.term;
    if (!term || this.checkDeadline()) return;
    const sent = sentNow(this.d.clock);
    this.lastRenewSentAt = sent.mono;
    const meta = this.meta();
    const metaJson = meta && JSON.stringify(meta);
    const changed = metaJson !== this.storedMeta && meta !== undefined;
    try {
      // The call may not outlive our leadership: we stop waiting at the deadline at the latest.
      await this.calls.call(term.remainingMs(), (signal) =>
        this.d.store.renew(term.lease, {
          leaseDurationMs: this.d.timings.leaseDurationMs,
          signal,
          ...(changed ? { meta } : {}),
        }),
      );
      this.d.failures.noteSuccess();
      if (changed) this.storedMeta = metaJson;
      if (this.term !== term || this.checkDeadline()) return;
      term.extend(sent);
      this.lastRenewAt = this.d.clock.wallNow();
      this.d.events.next({ type: 'renewed', term: term.lease.term, validUntil: term.validUntil() });
      await this.handovers.checkHandover(term);
    } catch (raw) {
      const error = toLeaseStoreError(raw);
      if (error.kind === 'lost') {
        this.d.failures.noteSuccess();
        if (this.term !== term) return;
        this.stepDown(messages.reasonLost, false);
        return;
      }
      // Counted even when the deadline timer ended the term first: the store did fail.
      this.noteFailure(error, sent.mono, false);
      if (this.term === term && !this.checkDeadline()) {
        this.d.logger.warn(messages.renewFailed(this.d.election, error.message, term.remainingMs()));
      }
    }
  }

  private becomeLeader(term: Term, sent: SentAt): void {
    const { election, identity } = this.d;
    const { lease } = term;
    this.term = term;
    // Requests are judged per term: those of earlier terms can never apply again.
    this.handovers.judged.clear();
    this.lastRenewSentAt = sent.mono;
    this.lastRenewAt = this.d.clock.wallNow();
    this.state = 'leader';
    term.start(() => this.checkDeadline());
    this.d.logger.log(messages.elected(election, identity, lease.term));
    this.d.events.next({ type: 'elected', term: lease.term, validUntil: term.validUntil() });
    this.setObservedLeader(identity, lease.term, this.meta());
    // A leader needs no slot: hand it to a standby so the election keeps its active followers.
    void this.slots?.withdraw();
  }

  private stepDown(reason: string, release: boolean): void {
    const term = this.term;
    if (!term || this.state !== 'leader') return;
    const { lease } = term;
    this.term = undefined;
    this.state = 'follower';
    term.end(reason);
    this.d.logger.log(messages.revoked(this.d.election, this.d.identity, lease.term, reason));
    this.d.events.next({ type: 'revoked', term: lease.term, reason });
    if (this.observedLeader === this.d.identity) this.setObservedLeader(undefined);
    this.handovers.pinnedUntil = 0;
    // A stale lease in the store would only delay the next leader: hand it back, best effort.
    if (release) void this.calls.release(lease);
    if (!this.stopController.signal.aborted) this.slots?.contend();
    this.scheduleNext();
  }

  /** The holder as the store last told, with its term and meta (none while no holder is known). */
  private setObservedLeader(leaderId: string | undefined, term?: number, meta?: LeaseMeta): void {
    this.observedTerm = leaderId === undefined ? undefined : term;
    this.observedMeta = leaderId === undefined ? undefined : meta;
    if (this.observedLeader === leaderId) return;
    this.observedLeader = leaderId;
    this.d.logger.debug?.(messages.leaderChanged(this.d.election, leaderId));
    this.d.events.next({ type: 'leader-changed', leaderId });
  }

  private openWatch(): void {
    if (!this.d.store.watch) return;
    try {
      this.watchHandle = this.d.store.watch(this.d.election, () => this.onMayBeFree());
    } catch (raw) {
      this.d.logger.warn(messages.watchFailed(this.d.election, toLeaseStoreError(raw).message));
    }
  }

  private onMayBeFree(): void {
    if (this.state !== 'follower' || this.stopController.signal.aborted) return;
    if (this.d.clock.now() < this.contendNotBefore) return;
    // A release wakes every follower: only the active ones answer, so a big fleet does not stampede.
    if (this.standingBy) return;
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
