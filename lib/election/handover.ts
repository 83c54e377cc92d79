import { randomUUID } from 'node:crypto';
import { leaderElectionChannels as channels, publishOn } from '../shared/diagnostics-channels.js';
import { errorMessage, FatalLeaseStoreError, NoLeaderError, toLeaseStoreError } from '../shared/errors.js';
import { isStorableText, isValidIdentity } from '../shared/identity.js';
import { sharedMessages } from '../shared/messages.js';
import { supportsHandover } from '../stores/lease-store.capabilities.js';
import type { HandoverRequest } from '../stores/lease-store.js';
import {
  isReplicaRequest,
  PRIORITY_REASON,
  recordHandoverRequest,
  SPREAD_REASON,
} from '../stores/lease-store.spread-rule.js';
import { electionMessages } from './election.messages.js';
import type { HandoverRequestOptions } from './elector.types.js';
import { handoverReserveMs } from './elector-options.js';
import type { LoopCalls, LoopDeps } from './loop-deps.js';
import { pendingOperatorRequest } from './pending-operator.js';
import { priorityDeclined } from './priority.js';
import type { StandbySlots } from './standby.js';
import type { Term } from './term.js';
import type { Learned, TermListener } from './term-keeper.js';

/** The loop's way out: step down, then, after `beforeRelease`, release (reserving the lease for `to()`). */
export type StepDownAndRelease = (
  reason: string,
  to: () => string | undefined,
  beforeRelease: () => Promise<void>,
) => Promise<void>;

/**
 * Handover requests beside the {@link ElectionLoop}: recording one (for the leader's current
 * term), and, while leading, judging the one left for our term that a renewal brings back: honour it
 * (hooks, then step down and release reserved for its target), decline it, or ignore it. It learns
 * of our terms as a {@link TermListener}; the loop only lends it the way out (`leave`).
 */
export class HandoverDesk implements TermListener {
  /** The term we lead, from the loop's term events (none while following). */
  private term?: Term;
  /** Until when (monotonic) spread requests are declined: we won through a directed handover. */
  private pinnedUntil = 0;
  /** The id of the handover request being honoured; requests already judged (declined, pinned by). */
  private honouring?: string;
  private readonly judged = new Set<string>();

  constructor(
    private readonly d: LoopDeps,
    private readonly lent: LoopCalls,
    private readonly slots: StandbySlots | undefined,
    private readonly leave: StepDownAndRelease,
    /** The leader reads requests every this many renewals (the renewal exchange's `readEvery`). */
    private readonly readEvery: number,
  ) {}

  elected(term: Term): void {
    this.term = term;
    // Requests are judged per term: those of earlier terms can never apply again.
    this.judged.clear();
  }

  /** After each renewal: the request it brought back, if any, for our term? */
  async renewed(term: Term, learned: Learned): Promise<void> {
    const request = learned.handover;
    if (request && this.term === term) this.judge(term, request);
  }

  /** Whether the next renewal should bring back the pending request: not while honouring one. */
  wantsRequest(): boolean {
    return supportsHandover(this.d.store) && this.honouring === undefined;
  }

  revoked(term: Term): void {
    if (this.term === term) this.term = undefined;
    this.pinnedUntil = 0;
  }

  /**
   * We won through an operator's directed handover, recently: spread and priority requests are
   * declined, and our lease meta says so.
   */
  isPinned(): boolean {
    return this.d.clock.now() < this.pinnedUntil;
  }

  private get leaderships(): number | undefined {
    return this.d.meta.leaderships;
  }

  /**
   * Records a handover request for the current leader's term (read from the store first, so a
   * request can never move a later leader). Resolves once the store has it; undefined when the
   * named replica already leads, or when a replica's own request (spread, priority) yielded to an
   * operator's pending request (nothing recorded). Rejects when nobody leads. A `priority` request
   * carries our priority (`requesterPriority`).
   */
  async requestHandover(options: HandoverRequestOptions): Promise<HandoverRequest | undefined> {
    const { store, election, identity } = this.d;
    if (!supportsHandover(store)) throw new FatalLeaseStoreError(electionMessages.handoverUnsupported(store.name));
    const { to, reason = 'operator', requestedBy = identity, requesterLeaderships } = options;
    checkRequestOption('to', to, to === undefined || isValidIdentity(to), sharedMessages.identityForm);
    checkRequestOption(
      'reason',
      reason,
      typeof reason === 'string' && reason !== '' && reason.length <= 200,
      'a non-empty string of at most 200 characters',
    );
    checkRequestOption(
      'requestedBy',
      requestedBy,
      typeof requestedBy === 'string' && requestedBy.length <= 300 && isStorableText(requestedBy),
      electionMessages.requestedByForm,
    );
    const info = await this.lent.calls.call('read', this.lent.callTimeoutMs, (signal) =>
      store.read(election, { signal }),
    );
    if (!info.held || info.holder === undefined)
      throw new NoLeaderError(election, electionMessages.handoverNoLeader(election));
    if (to !== undefined && to === info.holder) {
      this.d.logger.log(electionMessages.handoverAlreadyLeads(election, to));
      return undefined;
    }
    const request: HandoverRequest = {
      election,
      id: randomUUID(),
      term: info.term,
      requestedBy,
      reason,
      requestedAt: this.d.clock.wallNow(),
      ...(to === undefined ? {} : { to }),
      ...(requesterLeaderships === undefined ? {} : { requesterLeaderships }),
      ...(reason === PRIORITY_REASON ? { requesterPriority: this.d.meta.priority } : {}),
    };
    // A replica's own request yields to an operator's pending request (the store decides): not now.
    const recorded = await this.lent.calls.call('requestHandover', this.lent.callTimeoutMs, (signal) =>
      recordHandoverRequest(store, request, { signal }),
    );
    if (!recorded) {
      const yielded =
        reason === PRIORITY_REASON ? electionMessages.handoverPriorityYielded : electionMessages.handoverSpreadYielded;
      this.d.logger.debug?.(yielded(election, request.term));
      return undefined;
    }
    this.d.logger.log(electionMessages.handoverRecorded(election, request));
    this.publish('requested', request);
    // Asked of ourselves: no need to wait for the next renewal to notice.
    const term = this.term;
    if (term && term.lease.term === request.term) this.judge(term, request);
    // Asked for the lease ourselves: we poll as an active follower until it comes.
    if (this.slots && request.to === identity) {
      const { timings, standby } = this.d;
      // The leader reads the request at a read turn: every Nth renewal (readEveryNthRenewal).
      const readsWithin = this.readEvery * timings.renewIntervalMs;
      this.slots.awaitHandover(this.d.clock.now() + readsWithin + handoverReserveMs(timings, standby));
    }
    return request;
  }

  /** Honour, decline or ignore `request`, seen while leading `term`. */
  private judge(term: Term, request: HandoverRequest): void {
    const { election, identity, logger } = this.d;
    if (this.honouring !== undefined || this.judged.has(request.id)) return;
    if (request.to === identity) {
      // We lead because of it (the term right after the one it was for): an operator's directed
      // handover is respected for a while (a replica's own request pins nothing: a higher priority
      // must still be able to follow). Asked while we already led: nothing to do.
      this.judged.add(request.id);
      if (!isReplicaRequest(request.reason) && request.term + 1 === term.lease.term) {
        this.pinnedUntil = this.d.clock.now() + this.d.handoverHoldMs;
      }
      return;
    }
    // For an earlier term (leadership has moved since) or a later one (we are stale): not ours.
    if (request.term !== term.lease.term) return;
    this.judged.add(request.id);
    const why = this.declined(request);
    if (why !== undefined) {
      logger.log(electionMessages.handoverDeclined(election, request.id, why));
      this.publish('declined', request, why);
      void this.clearRequest(request);
      return;
    }
    this.honouring = request.id;
    logger.log(electionMessages.handoverHonouring(election, identity, request));
    this.publish('honoured', request);
    void this.honour(term, request).finally(() => {
      this.honouring = undefined;
    });
  }

  /** Why a replica's own request (spread, priority) is declined now; undefined: honour it (an operator's always). */
  private declined(request: HandoverRequest): string | undefined {
    const { handoverHoldMs } = this.d;
    if (request.reason === PRIORITY_REASON) {
      const holder = { ours: this.d.meta.priority, pinned: this.isPinned(), holdMs: handoverHoldMs };
      return priorityDeclined({ ...holder, leaderships: this.leaderships }, request);
    }
    if (request.reason !== SPREAD_REASON) return undefined;
    if (this.isPinned()) return electionMessages.handoverPinned(handoverHoldMs);
    const mine = this.leaderships ?? 0;
    const theirs = request.requesterLeaderships ?? 0;
    return mine < theirs + 2 ? electionMessages.handoverNotAhead(mine, theirs) : undefined;
  }

  private async honour(term: Term, request: HandoverRequest): Promise<void> {
    const { election, handover, logger } = this.d;
    try {
      await handover?.beforeStepDown?.(request);
    } catch (error) {
      logger.warn(electionMessages.handoverAbandoned(election, request.id, errorMessage(error)));
    }
    if (this.term !== term || this.lent.stopSignal.aborted) {
      logger.warn(electionMessages.handoverAbandoned(election, request.id, electionMessages.reasonHandoverTermEnded));
      return;
    }
    let done = request;
    const beforeRelease = async () => {
      try {
        await handover?.beforeRelease?.(request);
      } catch (error) {
        logger.warn(electionMessages.handoverAbandoned(election, request.id, errorMessage(error)));
      }
      if (isReplicaRequest(request.reason)) done = (await this.operatorsDuringDrain(term, request)) ?? done;
    };
    await this.leave(electionMessages.reasonHandover(request.to), () => done.to, beforeRelease);
    // Left in the store: stale from the next term on, and the new leader learns from it that a
    // directed handover made it leader (spread then leaves the election with it for a while).
    logger.log(electionMessages.handoverDone(election, done.id, done.to));
  }

  /**
   * Where spread (or priority) meets an operator: an operator's request for this term, written while
   * we drained for a replica's own request, takes the release (the drain serves either).
   */
  private async operatorsDuringDrain(term: Term, honoured: HandoverRequest): Promise<HandoverRequest | undefined> {
    const pending = await pendingOperatorRequest(this.d, this.lent, term.lease.term, honoured.id);
    if (!pending) return undefined;
    this.judged.add(pending.id);
    this.d.logger.log(electionMessages.handoverTakenOver(this.d.election, honoured.id, pending));
    this.publish('honoured', pending);
    return pending;
  }

  /**
   * Where a resignation (ours, or for stuck work) meets a handover request: an operator's request
   * pending for the term we leave names whom the lease is reserved for. For the loop's `leave`: the
   * target, asked after the read that `beforeRelease` makes.
   */
  resignation(): [to: () => string | undefined, beforeRelease: () => Promise<void>] {
    const term = this.term?.lease.term;
    let pending: HandoverRequest | undefined;
    const read = async () => {
      pending = term === undefined ? undefined : await pendingOperatorRequest(this.d, this.lent, term);
      if (pending) this.d.logger.log(electionMessages.resignedToOperator(this.d.election, pending));
    };
    return [() => pending?.to, read];
  }

  /** On the `handover` diagnostics channel, when anyone listens. */
  private publish(phase: 'requested' | 'honoured' | 'declined', request: HandoverRequest, why?: string): void {
    if (!channels.handover.hasSubscribers) return;
    const { election, identity } = this.d;
    const { id: requestId, term, to, reason, requestedBy } = request;
    publishOn('handover', {
      election,
      identity,
      phase,
      term,
      requestId,
      to,
      reason,
      requestedBy,
      ...(why === undefined ? {} : { declinedBecause: why }),
    });
  }

  /** Best effort: a request left behind is stale from the next term on anyway. */
  private async clearRequest(request: HandoverRequest): Promise<void> {
    const { store, election } = this.d;
    if (!supportsHandover(store) || this.lent.stopSignal.aborted) return;
    try {
      await this.lent.calls.call('clearHandover', this.lent.callTimeoutMs, (signal) =>
        store.clearHandover(election, request.id, { signal }),
      );
    } catch (raw) {
      this.d.logger.debug?.(electionMessages.handoverCheckFailed(election, toLeaseStoreError(raw).message));
    }
  }
}

function checkRequestOption(option: string, value: unknown, ok: boolean, allowed: string): void {
  if (!ok) throw new TypeError(electionMessages.handoverBadOption(option, allowed, value));
}
