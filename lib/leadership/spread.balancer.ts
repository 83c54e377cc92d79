import type { Logger } from '@nestjs/common';
import type { Observable, Subscription } from 'rxjs';
import type { LeadershipEvent } from '../election/elector.js';
import type { HandoverRequestOptions } from '../election/elector.types.js';
import type { ElectorTimings } from '../election/elector-options.js';
import { priorityOf, priorityWouldAsk } from '../election/priority.js';
import { type Clock, type ClockTimer, systemClock } from '../shared/clock.js';
import { errorMessage } from '../shared/errors.js';
import type { HandoverRequest, LeaseMeta, LeaseStore } from '../stores/lease-store.js';
import { PRIORITY_REASON, SPREAD_REASON } from '../stores/lease-store.spread-rule.js';
import { leadershipMessages as messages } from './leadership.messages.js';
import { PriorityAsks } from './priority.asks.js';

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
  /** What the holder published with its lease: its `leaderships` count, `pinned` and `priority`. */
  readonly holderMeta: LeaseMeta | undefined;
  /** Our state, failures and priority, and the holder's term as observed. */
  status(): { state: string; consecutiveFailures: number; priority: number; leaderTerm: number | null };
  /** Unhealthy (store failing, stuck work): such a replica asks for nothing. */
  health(): { healthy: boolean };
  /** Publishes how many elections this replica leads with every lease and acquire from now on. */
  setLeaderships(count: number | undefined): void;
  /**
   * A replica's own request for the lease (spread: with `requesterLeaderships`; priority: the
   * elector adds our priority): the holder honours it only if its rule still holds.
   */
  requestSpreadHandover(options: HandoverRequestOptions): Promise<HandoverRequest | undefined>;
}

/** What the balancer does: spread (publish counts, balance) and/or the preferred leader (always). */
export interface BalancerMode {
  /** Balance the elections over the replicas (the module's `spread`). Default true. */
  spread?: boolean;
  /** The module's store: a holder reads a request at its read turn, every Nth renewal (`readEveryNthRenewal`). */
  store?: Pick<LeaseStore, 'readEveryNthRenewal'>;
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
 *
 * The preferred leader (`priority`, lib/election/priority.ts) rides on the same ticks, with or
 * without spread: a healthy follower whose priority is strictly higher than a holder's asks it for
 * its election (reason `priority`), once per holder term, backing off while the term lasts
 * (priority.asks.ts). With spread it asks only a holder leading more than itself, one request at a
 * time, and only when no spread move is due: converged, replicas of higher priority lead ⌈E/N⌉ and
 * the others ⌊E/N⌋ (no two differ by more than one). Among equally loaded holders, spread asks the
 * one of lowest priority first.
 */
export class SpreadBalancer {
  private readonly subscriptions = new Map<SpreadMember, Subscription>();
  private timer?: ClockTimer;
  /** No new request before this time (monotonic ms): the last one is being honoured. */
  private quietUntil = 0;
  private running = false;
  private readonly readEvery: number;
  private readonly spreading: boolean;
  private readonly asks = new PriorityAsks();

  constructor(
    private readonly handles: ReadonlyMap<string, SpreadMember>,
    private readonly logger: Logger,
    /** The module's clock (a test's `FakeClock`); the system clock's timers never keep the process alive. */
    private readonly clock: Clock = systemClock,
    mode: BalancerMode = {},
  ) {
    this.spreading = mode.spread ?? true;
    this.readEvery = mode.store?.readEveryNthRenewal ?? 1;
  }

  /** The timings a request waits by: a holder reads it within its read turn, not its next renewal. */
  private requestTimings(handle: SpreadMember): Readonly<ElectorTimings> {
    const { timings } = handle;
    return { ...timings, renewIntervalMs: timings.renewIntervalMs * this.readEvery };
  }

  start(): void {
    const first = this.handles.values().next().value as SpreadMember | undefined;
    if (first && !first.supportsHandover) {
      // Spread and priority move elections by handover requests: without them spread can only publish counts.
      if (this.spreading) this.logger.warn(messages.spreadUnsupported(first.election));
      else if (first.status().priority !== 0) this.logger.warn(messages.priorityUnsupported(first.election));
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
    this.asks.keep(new Set(this.handles.keys()));
    if (!this.spreading) return;
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
    if (this.spreading && (await this.spreadOnce(mine))) return;
    await this.preferOnce(mine);
  }

  /** One spread request, when a holder leads at least 2 more than we do; true when one was made. */
  private async spreadOnce(mine: number): Promise<boolean> {
    let best: { handle: SpreadMember; theirs: number; priority: number } | undefined;
    for (const handle of this.handles.values()) {
      if (handle.holdsLease() || handle.isSteppingDown) continue;
      const holder = handle.leaderId;
      const meta = handle.holderMeta;
      const theirs = meta?.leaderships;
      if (holder === undefined || holder === handle.identity || theirs === undefined || meta?.pinned) continue;
      if (theirs < mine + 2) continue;
      // The most loaded holder first, of those the least preferred (lowest priority); ties broken
      // at random so replicas do not all ask the same one.
      const priority = priorityOf(meta);
      if (
        !best ||
        theirs > best.theirs ||
        (theirs === best.theirs && (priority < best.priority || (priority === best.priority && Math.random() < 0.5)))
      )
        best = { handle, theirs, priority };
    }
    if (!best) return false;
    this.quietAfter(best.handle);
    await this.ask(best.handle, { reason: SPREAD_REASON, requesterLeaderships: mine }, messages.spreadRequestFailed);
    return true;
  }

  /**
   * Priority requests: every election whose holder this healthy follower outranks (without spread),
   * or the one of the least preferred such holder (with spread: one request at a time).
   */
  private async preferOnce(mine: number): Promise<void> {
    const now = this.clock.now();
    const wanted: Array<{ handle: SpreadMember; priority: number }> = [];
    for (const handle of this.handles.values()) {
      const holder = handle.leaderId;
      if (holder === undefined || holder === handle.identity || handle.holdsLease() || handle.isSteppingDown) continue;
      const status = handle.status();
      const holderMeta = handle.holderMeta;
      const view = { ours: status.priority, holder: holderMeta, ...(this.spreading ? { ourLeaderships: mine } : {}) };
      if (status.state !== 'follower' || status.consecutiveFailures > 0 || !priorityWouldAsk(view)) continue;
      if (!this.asks.due(handle.election, holder, status.leaderTerm, now, this.requestTimings(handle))) continue;
      if (!handle.health().healthy) continue;
      wanted.push({ handle, priority: priorityOf(holderMeta) });
    }
    if (wanted.length === 0) return;
    const chosen = this.spreading ? [lowest(wanted)] : wanted;
    for (const { handle } of chosen) this.asks.asked(handle.election, now, this.requestTimings(handle));
    if (this.spreading) this.quietAfter(chosen[0]?.handle);
    const options = { reason: PRIORITY_REASON, ...(this.spreading ? { requesterLeaderships: mine } : {}) };
    await Promise.all(chosen.map(({ handle }) => this.ask(handle, options, messages.priorityRequestFailed)));
  }

  /** One request at a time: the next once this one can have been honoured. */
  private quietAfter(handle: SpreadMember | undefined): void {
    if (!handle) return;
    const timings = this.requestTimings(handle);
    this.quietUntil = this.clock.now() + timings.renewIntervalMs + 2 * timings.retryIntervalMs;
  }

  /** A handover request to ourselves; a refusal or failure is "not now" (asked again later). */
  private async ask(
    handle: SpreadMember,
    options: HandoverRequestOptions,
    failed: (election: string, message: string) => string,
  ): Promise<void> {
    try {
      await handle.requestSpreadHandover({ to: handle.identity, ...options });
    } catch (error) {
      this.logger.debug(failed(handle.election, errorMessage(error)));
    }
  }
}

/** The entry of lowest `priority`; ties at random, so followers do not all ask the same holder. */
function lowest<T extends { priority: number }>(entries: T[]): T {
  let best = entries[0] as T;
  for (const entry of entries.slice(1)) {
    if (entry.priority < best.priority || (entry.priority === best.priority && Math.random() < 0.5)) best = entry;
  }
  return best;
}
