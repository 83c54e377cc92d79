import type { Subject } from 'rxjs';
import type { Clock } from '../shared/clock.js';
import { leaderElectionChannels as channels, publishOn } from '../shared/diagnostics-channels.js';
import type { HandoverRequest, Lease } from '../stores/lease-store.js';
import { electionMessages as messages } from './election.messages.js';
import type { ElectorLogger, ElectorState, LeadershipEvent } from './elector.types.js';
import type { ObservedLeader } from './observed-leader.js';
import type { Term } from './term.js';

/** What a renewal taught the handover desk: the pending request (null: none), or undefined when not read. */
export interface Learned {
  handover?: HandoverRequest | null;
}

/**
 * Our terms as they happen, for a piece that acts on them (the handover desk), so the loop writes
 * none of its fields: `elected` when a term starts, `renewed` after each successful renewal with
 * what it brought back (awaited by the loop's tick, so what it sends never overlaps a renew),
 * `revoked` the moment the term ends (before its signal aborts).
 */
export interface TermListener {
  elected(term: Term): void;
  renewed(term: Term, learned: Learned): Promise<void>;
  revoked(term: Term): void;
}

export interface TermKeeperDeps {
  election: string;
  identity: string;
  clock: Clock;
  logger: ElectorLogger;
  events: Subject<LeadershipEvent>;
  observed: ObservedLeader;
}

/**
 * The elector's state and the term it holds, with the transitions between them: elected, renewed,
 * stepped down (deadline, lost, resigned, stopped). The {@link ElectionLoop} drives them; the
 * elector's getters read them. Each transition logs, emits its event and tells the listener; what
 * the loop does after a step-down (release, poll again) is its own business.
 */
export class TermKeeper {
  private current: ElectorState = 'idle';
  private held?: Term;
  /** Wall-clock time of the last successful acquire/renew. */
  private lastRenewWall?: number;
  private listener?: TermListener;
  private afterStepDown?: (lease: Lease, release: boolean) => void;

  constructor(private readonly d: TermKeeperDeps) {}

  /** The loop's hooks: the listener of our terms, and what to do once a term has ended. */
  listen(listener: TermListener, afterStepDown: (lease: Lease, release: boolean) => void): void {
    this.listener = listener;
    this.afterStepDown = afterStepDown;
  }

  get state(): ElectorState {
    return this.current;
  }

  /** The term we hold (none while following); a public read checks the deadline first. */
  get term(): Term | undefined {
    return this.held;
  }

  get lastRenewAt(): number | undefined {
    return this.lastRenewWall;
  }

  /** Started (or stopped before starting): a follower. */
  follow(): void {
    if (this.current === 'idle') this.current = 'follower';
  }

  /** The end: the last term's timer (if any) cleared. */
  stopped(): void {
    this.held?.disarm();
    this.current = 'stopped';
  }

  /** Steps down if leading past the deadline; true when it did (or had already). */
  checkDeadline(): boolean {
    if (this.current !== 'leader') return false;
    if (this.held && !this.held.isOver()) return false;
    this.stepDown(messages.reasonDeadline, true);
    return true;
  }

  /** The term we lead right now (the deadline checked first); undefined when not leading. */
  leading(): Term | undefined {
    return this.current === 'leader' && !this.checkDeadline() ? this.held : undefined;
  }

  elected(term: Term): void {
    const { election, identity } = this.d;
    const { lease } = term;
    this.held = term;
    this.listener?.elected(term);
    this.lastRenewWall = this.d.clock.wallNow();
    this.current = 'leader';
    term.start(() => this.checkDeadline());
    this.d.logger.log(messages.elected(election, identity, lease.term));
    this.d.events.next({ type: 'elected', term: lease.term, validUntil: term.validUntil() });
    if (channels.elected.hasSubscribers) {
      publishOn('elected', { election, identity, term: lease.term, validUntil: term.validUntil() });
    }
  }

  /** `term` was extended by a renewal: tell, and let the listener act on what it `learned` (the tick awaits it). */
  renewed(term: Term, learned: Promise<Learned>): Promise<void> {
    this.lastRenewWall = this.d.clock.wallNow();
    // Told at once (the term is extended now); the listener acts once the renewal's reads are in.
    this.d.events.next({ type: 'renewed', term: term.lease.term, validUntil: term.validUntil() });
    const { listener } = this;
    return listener ? learned.then((what) => listener.renewed(term, what)) : learned.then(() => undefined);
  }

  /** Ends the term we lead (its signal aborts); `release`: the lease should be handed back. */
  stepDown(reason: string, release: boolean): void {
    const term = this.held;
    if (!term || this.current !== 'leader') return;
    const { lease } = term;
    this.held = undefined;
    this.current = 'follower';
    this.listener?.revoked(term);
    term.end(reason);
    this.d.logger.log(messages.revoked(this.d.election, this.d.identity, lease.term, reason));
    this.d.events.next({ type: 'revoked', term: lease.term, reason });
    if (channels.revoked.hasSubscribers) {
      publishOn('revoked', { election: this.d.election, identity: this.d.identity, term: lease.term, reason });
    }
    if (this.d.observed.leaderId === this.d.identity) this.d.observed.set(undefined);
    this.afterStepDown?.(lease, release);
  }
}
