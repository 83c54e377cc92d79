import { randomUUID } from 'node:crypto';
import { messages } from '../messages/leader-election.messages.js';
import { errorMessage, NoLeaderError } from '../shared/errors.js';
import { isStorableText, isValidIdentity } from '../shared/identity.js';
import {
  FatalLeaseStoreError,
  type HandoverRequest,
  recordHandoverRequest,
  supportsHandover,
  toLeaseStoreError,
} from '../stores/lease-store.js';
import type { LoopDeps } from './election-loop.js';
import type { ElectorState, HandoverRequestOptions } from './elector.types.js';
import type { ElectorCalls } from './store-calls.js';
import type { Term } from './term.js';

/** What the desk sees of the loop: its state, the term it leads, spread's count, and the way out. */
export interface HandoverSeam {
  state(): ElectorState;
  term(): Term | undefined;
  leaderships(): number | undefined;
  /** Step down and release, reserving the lease for `to` when given (the loop's `leave`). */
  leave(reason: string, to: string | undefined, beforeRelease: () => Promise<void>): Promise<void>;
}

/**
 * Handover requests beside the {@link ElectionLoop}: recording one (for the leader's current
 * term), and, while leading, judging the one left for our term after each renewal: honour it
 * (hooks, then step down and release reserved for its target), decline it, or ignore it.
 */
export class HandoverDesk {
  /** Until when (monotonic) spread requests are declined: we won through a directed handover. */
  pinnedUntil = 0;
  /** The id of the handover request being honoured; requests already judged (declined, pinned by). */
  private honouring?: string;
  readonly judged = new Set<string>();

  constructor(
    private readonly d: LoopDeps,
    private readonly calls: ElectorCalls,
    private readonly stopController: Pick<AbortController, 'signal'>,
    private readonly callTimeoutMs: number,
    private readonly loop: HandoverSeam,
  ) {}

  private get state(): ElectorState {
    return this.loop.state();
  }

  private get term(): Term | undefined {
    return this.loop.term();
  }

  private get leaderships(): number | undefined {
    return this.loop.leaderships();
  }

  private leave(reason: string, to: string | undefined, beforeRelease: () => Promise<void>): Promise<void> {
    return this.loop.leave(reason, to, beforeRelease);
  }

  /**
   * Records a handover request for the current leader's term (read from the store first, so a
   * request can never move a later leader). Resolves once the store has it; undefined when the
   * named replica already leads, or when a spread request yielded to a pending request of another
   * kind (nothing recorded). Rejects when nobody leads.
   */
  async requestHandover(options: HandoverRequestOptions): Promise<HandoverRequest | undefined> {
    const { store, election, identity } = this.d;
    if (!supportsHandover(store)) throw new FatalLeaseStoreError(messages.handover.unsupported(store.name));
    const { to, reason = 'operator', requestedBy = identity, requesterLeaderships } = options;
    checkRequestOption('to', to, to === undefined || isValidIdentity(to), messages.identityForm);
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
      messages.requestedByForm,
    );
    const info = await this.calls.call(this.callTimeoutMs, (signal) => store.read(election, { signal }));
    if (!info.held || info.holder === undefined) throw new NoLeaderError(election, messages.handoverNoLeader(election));
    if (to !== undefined && to === info.holder) {
      this.d.logger.log(messages.handoverAlreadyLeads(election, to));
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
    };
    // A spread request yields to a pending request of another kind (the store decides): not now.
    if (!(await this.calls.call(this.callTimeoutMs, (signal) => recordHandoverRequest(store, request, { signal })))) {
      this.d.logger.debug?.(messages.handoverSpreadYielded(election, request.term));
      return undefined;
    }
    this.d.logger.log(messages.handoverRecorded(election, request));
    // Asked of ourselves: no need to wait for the next renewal to notice.
    const term = this.term;
    if (term && term.lease.term === request.term && this.state === 'leader') this.judge(term, request);
    return request;
  }

  /** After each renewal: is there a request for our term? (One read; a failure waits for the next renewal.) */
  async checkHandover(term: Term): Promise<void> {
    const { store, election } = this.d;
    if (!supportsHandover(store) || this.honouring !== undefined) return;
    let request: HandoverRequest | undefined;
    try {
      request = await this.calls.call(Math.min(this.callTimeoutMs, term.remainingMs()), (signal) =>
        store.readHandover(election, { signal }),
      );
    } catch (raw) {
      this.d.logger.debug?.(messages.handoverCheckFailed(election, toLeaseStoreError(raw).message));
      return;
    }
    if (request && this.term === term && this.state === 'leader') this.judge(term, request);
  }

  /** Honour, decline or ignore `request`, seen while leading `term`. */
  private judge(term: Term, request: HandoverRequest): void {
    const { election, identity, logger } = this.d;
    if (this.honouring !== undefined || this.judged.has(request.id)) return;
    if (request.to === identity) {
      // We lead because of it (the term right after the one it was for): a directed handover is
      // respected for a while. Asked while we already led: nothing to do.
      this.judged.add(request.id);
      if (request.reason !== 'spread' && request.term + 1 === term.lease.term) {
        this.pinnedUntil = this.d.clock.now() + this.d.handoverHoldMs;
      }
      return;
    }
    // For an earlier term (leadership has moved since) or a later one (we are stale): not ours.
    if (request.term !== term.lease.term) return;
    this.judged.add(request.id);
    if (request.reason === 'spread') {
      const why =
        this.d.clock.now() < this.pinnedUntil
          ? messages.handoverPinned(this.d.handoverHoldMs)
          : (this.leaderships ?? 0) < (request.requesterLeaderships ?? 0) + 2
            ? messages.handoverNotAhead(this.leaderships ?? 0, request.requesterLeaderships ?? 0)
            : undefined;
      if (why !== undefined) {
        logger.log(messages.handoverDeclined(election, request.id, why));
        void this.clearRequest(request);
        return;
      }
    }
    this.honouring = request.id;
    logger.log(messages.handoverHonouring(election, identity, request));
    void this.honour(term, request).finally(() => {
      this.honouring = undefined;
    });
  }

  private async honour(term: Term, request: HandoverRequest): Promise<void> {
    const { election, handover, logger } = this.d;
    try {
      await handover?.beforeStepDown?.(request);
    } catch (error) {
      logger.warn(messages.handoverAbandoned(election, request.id, errorMessage(error)));
    }
    if (this.term !== term || this.state !== 'leader' || this.stopController.signal.aborted) {
      logger.warn(messages.handoverAbandoned(election, request.id, messages.reasonHandoverTermEnded));
      return;
    }
    await this.leave(messages.reasonHandover(request.to), request.to, async () => {
      try {
        await handover?.beforeRelease?.(request);
      } catch (error) {
        logger.warn(messages.handoverAbandoned(election, request.id, errorMessage(error)));
      }
    });
    // Left in the store: stale from the next term on, and the new leader learns from it that a
    // directed handover made it leader (spread then leaves the election with it for a while).
    logger.log(messages.handoverDone(election, request.id, request.to));
  }

  /** Best effort: a request left behind is stale from the next term on anyway. */
  private async clearRequest(request: HandoverRequest): Promise<void> {
    const { store, election } = this.d;
    if (!supportsHandover(store) || this.stopController.signal.aborted) return;
    try {
      await this.calls.call(this.callTimeoutMs, (signal) => store.clearHandover(election, request.id, { signal }));
    } catch (raw) {
      this.d.logger.debug?.(messages.handoverCheckFailed(election, toLeaseStoreError(raw).message));
    }
  }
}

function checkRequestOption(option: string, value: unknown, ok: boolean, allowed: string): void {
  if (!ok) throw new TypeError(messages.handoverBadOption(option, allowed, value));
}
