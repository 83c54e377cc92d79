import { createHash } from 'node:crypto';
import type { Clock, ClockTimer } from '../shared/clock.js';
import { toLeaseStoreError } from '../shared/errors.js';
import type { Lease, LeaseStore } from '../stores/lease-store.js';
import type { BoundedElectorCalls } from './bounded-calls.js';
import { electionMessages as messages } from './election.messages.js';
import type { ElectorLogger } from './elector.types.js';
import type { LoopCalls, LoopDeps } from './loop-deps.js';

/** Keys of the candidate slots start with this; no election name can (it must start with a letter or digit). */
export const STANDBY_KEY_PREFIX = '~standby.';
/** Longest key the SQL stores hold (their `election` column); longer slot keys use a digest of the name. */
const MAX_KEY_LENGTH = 200;

/** The key of slot `index` of `election`: an ordinary lease, never a name an election can have. */
export function standbySlotKey(election: string, index: number): string {
  const key = `${STANDBY_KEY_PREFIX}${index}.${election}`;
  if (key.length <= MAX_KEY_LENGTH) return key;
  return `${STANDBY_KEY_PREFIX}${index}.#${createHash('sha256').update(election).digest('hex')}`;
}

/**
 * A slot's lease: three leases of the election, within the store's limits — long, because a slot
 * only decides who polls often; renewed every third of it, so one failed renewal keeps the slot.
 */
export function standbySlotLeaseMs(store: LeaseStore, leaseDurationMs: number): number {
  const { minLeaseDurationMs: min, maxLeaseDurationMs: max, leaseDurationStepMs: step = 1 } = store.limits;
  const wanted = Math.min(max, Math.max(min, 3 * leaseDurationMs));
  return Math.max(min, Math.floor(wanted / step) * step);
}

export interface StandbyDeps {
  store: LeaseStore;
  election: string;
  identity: string;
  clock: Clock;
  logger: ElectorLogger;
  calls: BoundedElectorCalls;
  /** How many slots (active followers) the election has. */
  slots: number;
  /** How often a follower without a slot tries for one (±15 %). */
  pollMs: number;
  slotLeaseMs: number;
  callTimeoutMs: number;
  /** Called when this follower becomes active or stops being active. */
  onChange(): void;
}

const JITTER = 0.15;

/**
 * Candidate slots behind the `activeFollowers` option. Only a follower holding one of the
 * election's K slots polls the election every retry interval; the others stand by and poll it every
 * `standbyPollMs`, trying for a free slot just as often. A slot is an ordinary lease in the same
 * store, so a crashed active follower's slot frees itself and a standby takes it over.
 *
 * Slots decide how often a follower asks, never who leads: the election's own lease does that, so
 * nothing here touches a safety rule. A leader gives its slot back, so K followers stay active.
 */
export class StandbySlots {
  private held?: { lease: Lease; index: number; activeUntil: number };
  private next: number;
  private timer?: ClockTimer;
  private inFlight?: Promise<void>;
  private contending = false;
  /** Until then (monotonic) we poll as an active follower anyway: we asked for a handover to us. */
  private awaitingUntil = 0;

  constructor(private readonly d: StandbyDeps) {
    this.next = Math.floor(Math.random() * d.slots);
  }

  /** Holds a slot whose lease is still current (judged from the send time of its last acquire/renew). */
  isActive(): boolean {
    return this.held !== undefined && this.d.clock.now() < this.held.activeUntil;
  }

  /** A standby follower: holding no slot and not awaiting a handover to us. */
  standingBy(): boolean {
    return !this.isActive() && this.d.clock.now() >= this.awaitingUntil;
  }

  /** We asked for a handover to us: poll as an active follower until `untilMs` (monotonic), from now. */
  awaitHandover(untilMs: number): void {
    this.awaitingUntil = untilMs;
    this.d.onChange();
  }

  /** A follower (again): try for a slot now, then keep it or keep trying. */
  contend(): void {
    if (this.contending) return;
    this.contending = true;
    this.schedule(0);
  }

  /** Leading or stopping: stop trying and hand our slot back, so another follower becomes active. */
  async withdraw(): Promise<void> {
    this.contending = false;
    this.clearTimer();
    await this.inFlight;
    const held = this.held;
    this.held = undefined;
    if (held) await this.d.calls.release(held.lease);
  }

  private schedule(delayMs: number): void {
    this.clearTimer();
    if (!this.contending) return;
    this.timer = this.d.clock.setTimeout(() => {
      this.timer = undefined;
      this.inFlight = this.tick().finally(() => {
        this.inFlight = undefined;
        const renewIn = this.d.slotLeaseMs / 3;
        this.schedule(this.held ? renewIn : this.d.pollMs * (1 + (Math.random() * 2 - 1) * JITTER));
      });
    }, delayMs);
  }

  private async tick(): Promise<void> {
    const wasActive = this.isActive();
    if (this.held && !wasActive) this.held = undefined;
    try {
      if (this.held) await this.renew(this.held);
      else await this.acquire();
    } catch (raw) {
      const error = toLeaseStoreError(raw);
      if (error.kind === 'lost') this.held = undefined;
      else this.d.logger.debug?.(messages.standbySlotFailed(this.d.election, error.message));
    }
    if (this.isActive() !== wasActive) this.d.onChange();
  }

  private async acquire(): Promise<void> {
    const { clock, store, identity, slotLeaseMs, calls, callTimeoutMs } = this.d;
    const index = this.next;
    this.next = (this.next + 1) % this.d.slots;
    const sentAt = clock.now();
    const result = await calls.call(
      'acquireSlot',
      callTimeoutMs,
      (signal) =>
        store.acquire({
          election: standbySlotKey(this.d.election, index),
          identity,
          leaseDurationMs: slotLeaseMs,
          signal,
        }),
      (late) => (late.acquired ? calls.release(late.lease) : undefined),
    );
    if (!result.acquired) return;
    if (!this.contending) {
      // Won while withdrawing (we became leader meanwhile): not needed.
      await calls.release(result.lease);
      return;
    }
    this.held = { lease: result.lease, index, activeUntil: sentAt + this.activeForMs };
    this.next = index;
  }

  private async renew(held: { lease: Lease; activeUntil: number }): Promise<void> {
    const { clock, store, slotLeaseMs, calls, callTimeoutMs } = this.d;
    const sentAt = clock.now();
    await calls.call('renewSlot', callTimeoutMs, (signal) =>
      store.renew(held.lease, { leaseDurationMs: slotLeaseMs, signal }),
    );
    if (this.held === held) held.activeUntil = sentAt + this.activeForMs;
  }

  /** Active until two thirds of the slot's lease after the last good send: before the store frees it. */
  private get activeForMs(): number {
    return (this.d.slotLeaseMs * 2) / 3;
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The loop's candidate slots when `activeFollowers` is set (undefined otherwise). */
export function standbySlotsFor(d: LoopDeps, lent: LoopCalls, onChange: () => void): StandbySlots | undefined {
  if (!d.standby) return undefined;
  const { store, election, identity, clock, logger } = d;
  return new StandbySlots({
    store,
    election,
    identity,
    clock,
    logger,
    calls: lent.calls,
    callTimeoutMs: lent.callTimeoutMs,
    slots: d.standby.activeFollowers,
    pollMs: d.standby.standbyPollMs,
    slotLeaseMs: standbySlotLeaseMs(store, d.timings.leaseDurationMs),
    onChange,
  });
}
