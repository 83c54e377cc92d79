/**
 * Every instrument, named as Prometheus shows it. Counters carry no `_total` here: the Prometheus
 * exporter appends it, and OTLP backends name counters without it.
 */
export const METRIC = {
  isLeader: 'leader_election_is_leader',
  term: 'leader_election_term',
  transitions: 'leader_election_transitions',
  storeCallDuration: 'leader_election_store_call_duration_seconds',
  storeFailures: 'leader_election_store_failures',
  leaderOnlyRuns: 'leader_election_leader_only_runs',
  leaderOnlySkipped: 'leader_election_leader_only_skipped',
  ticksLost: 'leader_election_ticks_lost',
  jobSkipped: 'leader_election_job_skipped',
  leaderOnlyDuration: 'leader_election_leader_only_duration_seconds',
  leaderlessSeconds: 'leader_election_leaderless_seconds',
  stuckWorkSeconds: 'leader_election_stuck_work_seconds',
} as const;

/** `type` label of the transitions counter, one per elector event that changes leadership. */
export const TRANSITION_TYPES = ['elected', 'revoked', 'leader_changed'] as const;

/** `reason` label of the job skipped counter. */
export const JOB_SKIP_REASONS = ['paused', 'board_unread'] as const;

/** `kind` label of the store failures counter: the elector's error classes. */
export const STORE_FAILURE_KINDS = ['transient', 'fatal', 'lost'] as const;

/** `operation` label of the store call histogram. */
export const STORE_OPERATIONS = ['acquire', 'renew', 'release', 'read'] as const;
export type StoreOperation = (typeof STORE_OPERATIONS)[number];

/**
 * Store calls: the default deadline (10 s) and its ⅓ (3.3 s, the renew latency alert) fall on
 * bucket bounds, so the alert's `histogram_quantile` does not interpolate across them.
 */
export const STORE_CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3.3, 5, 10, 20];

/** Leader-only work: from a millisecond handler to a long batch job. */
export const LEADER_ONLY_BUCKETS = [0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

export const DESCRIPTIONS: Record<keyof typeof METRIC, string> = {
  isLeader: '1 while this replica leads the election, else 0',
  term: 'Fencing token of our term while leading, 0 when not leading',
  transitions: 'Leadership changes seen by this replica, by type (elected, revoked, leader_changed)',
  storeCallDuration: 'Duration of lease store calls, by operation and outcome',
  storeFailures: 'Failed lease store calls, by kind (transient, fatal, lost)',
  leaderOnlyRuns: '@LeaderOnly calls that ran on this replica',
  leaderOnlySkipped: '@LeaderOnly calls skipped because this replica was not the leader',
  ticksLost:
    "Fire times of a once-per-tick job that ran on no replica, counted by the leader that records the job's next run",
  jobSkipped:
    'Scheduled runs of a job the leader skipped, by reason: paused (on the job board), board_unread (the board could not be read in its term)',
  leaderOnlyDuration: 'Duration of @LeaderOnly calls that ran, until their result settled',
  leaderlessSeconds: 'How long this replica has known no leader of the election (0 while one is known)',
  stuckWorkSeconds:
    "How long the handler's stuck call (running past its stuckAfterMs) has run, 0 while none is; handlers watched for stuck work only",
};
