import {
  type ElectionHandle,
  LeaderElectionService,
  type LeaderElectionStatus,
  type LeadershipEvent,
} from '@leaderlease/nestjs';
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
  /** The leader's `priority`, as published with its lease (0 when it publishes none); null while no leader is known. */
  leaderPriority: number | null;
  /** Wall-clock time (ISO 8601) until which our lease holds without another renewal; leader only. */
  leaseValidUntil: string | null;
  healthy: boolean;
  healthReason: string | null;
  /**
   * This replica's side of job control (`status().jobs`): how many jobs, which are paused as the
   * leader last read the job board (null on a follower), runs skipped while paused; null without jobs.
   */
  jobs: NonNullable<LeaderElectionStatus['jobs']> | null;
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
  /** This replica's `priority` option: a follower with a higher one than a leader's asks it for the lease. */
  priority: number;
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
    const elections = this.elections.map((election) => election.status());
    return {
      identity: this.elections[0].identity,
      priority: elections[0].priority,
      elections: this.elections.map((election, index) => this.view(election, elections[index])),
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

  private view(election: ElectionHandle, status: LeaderElectionStatus): ElectionView {
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
      leaderPriority: status.leaderPriority,
      leaseValidUntil: until === undefined ? null : new Date(until).toISOString(),
      healthy: health.healthy,
      healthReason: health.reason ?? null,
      jobs: status.jobs ?? null,
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
