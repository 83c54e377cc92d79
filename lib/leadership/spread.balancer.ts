import type { Logger } from '@nestjs/common';
import type { Observable, Subscription } from 'rxjs';
import type { LeadershipEvent } from '../election/elector.js';
import type { HandoverRequestOptions } from '../election/elector.types.js';
import type { ElectorTimings } from '../election/elector-options.js';
import { type Clock, type ClockTimer, systemClock } from '../shared/clock.js';
import { errorMessage } from '../shared/errors.js';
import type { HandoverRequest, LeaseMeta } from '../stores/lease-store.js';
import { SPREAD_REASON } from '../stores/lease-store.spread-rule.js';
import { leadershipMessages as messages } from './leadership.messages.js';

const JITTER = 0.15;

/** What spread reads and asks of one election (the election runtime implements it). */
export interface SpreadMember {
  readonly election: string;
  readonly identity: string;
  readonly leaderId: string | undefined;
  readonly timings: Readonly<ElectorTimings>;
  readonly events$: Observable<LeadershipEvent>;
  readonly isSteppingDown: boolean;
  /** The lease is ours (before its deadline), stepping down or not: it counts as a leadership. */
  holdsLease(): boolean;
  readonly supportsHandover: boolean;
  /** What the holder published with its lease: its `leaderships` count and `pinned`. */
  readonly holderMeta: LeaseMeta | undefined;
  /** Publishes how many elections this replica leads with every lease and acquire from now on. */
  setLeaderships(count: number | undefined): void;
  /** A spread request (it carries `requesterLeaderships`): the holder honours it only if the gap still holds. */
  requestSpreadHandover(options: HandoverRequestOptions): Promise<HandoverRequest | undefined>;
}

/**
 * Spreads an app's elections over its replicas without a coordinator. Every replica publishes with
 * each lease it holds how many elections it leads (`LeaseMeta.leaderships`); followers read it with
 * every acquire attempt. Every retry interval, a replica that sees a holder leading at least 2 more
 * than itself asks it, through a handover request, for one election (the most loaded holder's).
 * The holder honours it only if the difference still holds, so stale views never move work back
 * and forth. When every pair of replicas differs by at most one, nobody asks: a balanced cluster
 * makes no handovers. Converged, no replica leads more than ⌈E/N⌉.
 *
 * A holder that won through a directed handover publishes `pinned` for `handoverHoldMs` and
 * declines spread requests meanwhile: an operator's choice stands, the rest is balanced around it.
 * Likewise a spread request never replaces an operator's pending request (the store refuses it,
 * `requestHandover` resolves undefined): that is "not now", and the balancer asks again later.
 */
export class SpreadBalancer {
  private readonly subscriptions = new Map<SpreadMember, Subscription>();
  private timer?: ClockTimer;
  /** No new request before this time (monotonic ms): the last one is being honoured. */
  private quietUntil = 0;
  private running = false;

  constructor(
    private readonly handles: ReadonlyMap<string, SpreadMember>,
    private readonly logger: Logger,
    /** The module's clock (a test's `FakeClock`); the system clock's timers never keep the process alive. */
    private readonly clock: Clock = systemClock,
  ) {}

  start(): void {
    const first = this.handles.values().next().value as SpreadMember | undefined;
    if (first && !first.supportsHandover) {
      // Spread moves elections by handover requests: without them it can only publish counts.
      this.logger.warn(messages.spreadUnsupported(first.election));
      return;
    }
    this.running = true;
    this.changed();
    this.schedule();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
    this.subscriptions.clear();
  }

  /** An election was added or removed: follow the new set, publish the new count. */
  changed(): void {
    if (!this.running) return;
    const current = new Set(this.handles.values());
    for (const [handle, subscription] of this.subscriptions) {
      if (current.has(handle)) continue;
      subscription.unsubscribe();
      this.subscriptions.delete(handle);
    }
    for (const handle of current) {
      if (this.subscriptions.has(handle)) continue;
      this.subscriptions.set(
        handle,
        handle.events$.subscribe((event) => {
          if (event.type === 'elected' || event.type === 'revoked') this.publish();
        }),
      );
    }
    this.publish();
  }

  /** How many elections this replica leads now. */
  private leading(): number {
    let count = 0;
    for (const handle of this.handles.values()) if (handle.holdsLease()) count += 1;
    return count;
  }

  /** Every lease we hold (and every acquire) carries the count from the next call on. */
  private publish(): void {
    const count = this.leading();
    for (const handle of this.handles.values()) handle.setLeaderships(count);
  }

  private schedule(): void {
    if (!this.running) return;
    const retryMs = this.retryMs();
    const delay = retryMs * (1 + (Math.random() * 2 - 1) * JITTER);
    // systemClock's timers are unref'd: the elections' own timers decide whether the process lives.
    this.timer = this.clock.setTimeout(() => void this.tick().finally(() => this.schedule()), delay);
  }

  private retryMs(): number {
    const first = this.handles.values().next().value as SpreadMember | undefined;
    return first?.timings.retryIntervalMs ?? 2_000;
  }

  private async tick(): Promise<void> {
    if (this.clock.now() < this.quietUntil) return;
    const mine = this.leading();
    let best: { handle: SpreadMember; theirs: number } | undefined;
    for (const handle of this.handles.values()) {
      if (handle.holdsLease() || handle.isSteppingDown) continue;
      const holder = handle.leaderId;
      const meta = handle.holderMeta;
      const theirs = meta?.leaderships;
      if (holder === undefined || holder === handle.identity || theirs === undefined || meta?.pinned) continue;
      if (theirs < mine + 2) continue;
      // The most loaded holder first; ties broken at random so replicas do not all ask the same one.
      if (!best || theirs > best.theirs || (theirs === best.theirs && Math.random() < 0.5)) best = { handle, theirs };
    }
    if (!best) return;
    const { timings, identity, election } = best.handle;
    this.quietUntil = this.clock.now() + timings.renewIntervalMs + 2 * timings.retryIntervalMs;
    try {
      await best.handle.requestSpreadHandover({
        to: identity,
        reason: SPREAD_REASON,
        requesterLeaderships: mine,
      });
    } catch (error) {
      this.logger.debug(messages.spreadRequestFailed(election, errorMessage(error)));
    }
  }
}
