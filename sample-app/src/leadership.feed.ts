import { type ElectionHandle, LeaderElectionService, type LeadershipEvent } from '@leaderlease/nestjs';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { interval, map, merge, type Observable, Subject, startWith, takeUntil } from 'rxjs';

/** One election as the status page and `GET /leader` show it. */
export interface ElectionView {
  election: string;
  identity: string;
  state: string;
  isLeader: boolean;
  leaderId: string | null;
  /** Where the leader can be reached (its `advertise` option, published with its lease); null when unknown. */
  leaderAdvertise: string | null;
  /** The leader's term, ours while we lead (a follower's as of its last poll); null while no leader is known. */
  term: number | null;
  /** Wall-clock time (ISO 8601) until which our lease holds without another renewal; leader only. */
  leaseValidUntil: string | null;
  healthy: boolean;
  healthReason: string | null;
}

export interface FeedEvent {
  at: string;
  election: string;
  type: LeadershipEvent['type'];
  term: number | null;
  leaderId: string | null;
  reason: string | null;
}

export interface FeedSnapshot {
  identity: string;
  elections: ElectionView[];
  /**
   * Every replica this one has seen lead something, itself included: the choices of the status
   * page's handover buttons. A replica that never led stays unknown (type its name in a request).
   */
  replicas: string[];
  /** The last events this replica saw, newest first. */
  events: FeedEvent[];
}

const KEEP_EVENTS = 20;
/** A snapshot at least this often: keeps proxies from closing an idle stream, refreshes "valid until". */
const HEARTBEAT_MS = 5_000;

/**
 * What this replica knows about its elections, as snapshots: on every leadership event, and on a
 * heartbeat. Every election of the app (`service.elections`), the default first.
 */
@Injectable()
export class LeadershipFeed implements OnModuleDestroy {
  private readonly elections: ElectionHandle[];
  private readonly validUntil = new Map<string, number>();
  private readonly replicas = new Set<string>();
  private readonly events: FeedEvent[] = [];
  private readonly changes = new Subject<void>();
  private readonly destroyed = new Subject<void>();

  constructor(election: LeaderElectionService) {
    this.elections = election.elections.map((name) => election.election(name));
    this.replicas.add(election.identity);
    for (const each of this.elections) {
      each.events$.pipe(takeUntil(this.destroyed)).subscribe((event) => this.record(each.election, event));
    }
  }

  snapshot(): FeedSnapshot {
    return {
      identity: this.elections[0].identity,
      elections: this.elections.map((election) => this.view(election)),
      replicas: [...this.replicas].sort(),
      events: [...this.events],
    };
  }

  /** The snapshot now, then after every change (and every few seconds); ends when the app stops. */
  snapshots(): Observable<FeedSnapshot> {
    return merge(this.changes, interval(HEARTBEAT_MS)).pipe(
      startWith(undefined),
      map(() => this.snapshot()),
      takeUntil(this.destroyed),
    );
  }

  onModuleDestroy(): void {
    this.destroyed.next();
    this.destroyed.complete();
    this.changes.complete();
  }

  private view(election: ElectionHandle): ElectionView {
    const status = election.status();
    const health = election.health();
    const until = status.isLeader ? this.validUntil.get(election.election) : undefined;
    return {
      election: status.election,
      identity: status.identity,
      state: status.state,
      isLeader: status.isLeader,
      leaderId: status.leaderId,
      leaderAdvertise: status.leaderAdvertise,
      term: status.leaderTerm,
      leaseValidUntil: until === undefined ? null : new Date(until).toISOString(),
      healthy: health.healthy,
      healthReason: health.reason ?? null,
    };
  }

  private record(election: string, event: LeadershipEvent): void {
    if (event.validUntil !== undefined) this.validUntil.set(election, event.validUntil);
    if (event.type === 'revoked') this.validUntil.delete(election);
    if (event.leaderId) this.replicas.add(event.leaderId);
    // Renewals refresh "valid until" but would flood the list of events.
    if (event.type !== 'renewed') {
      this.events.unshift({
        at: new Date().toISOString(),
        election,
        type: event.type,
        term: event.term ?? null,
        leaderId: event.leaderId ?? null,
        reason: event.reason ?? null,
      });
      this.events.length = Math.min(this.events.length, KEEP_EVENTS);
    }
    this.changes.next();
  }
}
