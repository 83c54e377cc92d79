/**
 * The texts of the per-election runtime (drain, stuck work, spread, once-per-tick runs, health). None may
 * include a connection string, account key or SAS: callers pass only names, numbers and redacted messages.
 */
export const leadershipMessages = {
  // Leader-only work, the drain before a step-down, spread.
  jobSkipped: (target: string, election: string, steppingDown: boolean) =>
    `skipped ${target}: ${steppingDown ? 'stepping down as leader' : 'not the leader'} of "${election}" (further skips are counted, not logged, until its leadership changes)`,
  handoverDrainWaiting: (election: string, id: string) =>
    `leader election "${election}": waiting for running leader-only work before honouring handover request ${id}`,
  spreadUnsupported: (election: string) =>
    `spread is on (several elections) but the store of "${election}" has no handover requests (requestHandover/readHandover/clearHandover): elections stay where they were won; set spread: false to silence this`,
  spreadRequestFailed: (election: string, message: string) =>
    `spread: could not ask for election "${election}" (${message}); trying again later`,
  unknownElection: (where: string, election: string, configured: readonly string[]) =>
    `${where}: this application has no election "${election}"; it has ${configured.map((name) => `"${name}"`).join(', ')}`,
  drainWaiting: (election: string, running: number, timeoutMs: number) =>
    `leader election "${election}": stepping down; waiting up to ${timeoutMs} ms for ${running} running @LeaderOnly call(s)`,
  drainTimedOut: (election: string, running: number, timeoutMs: number, graceMs: number) =>
    `leader election "${election}": ${running} @LeaderOnly call(s) still running after shutdownTimeoutMs (${timeoutMs} ms); their signal is aborted, releasing the lease within ${graceMs} ms`,
  stillRunningAtRelease: (election: string, running: number) =>
    `leader election "${election}": releasing the lease while ${running} leader-only call(s) or @OnElected() handler(s) still run; they ignored the aborted signal`,
  waitStopped: (election: string) => `leader election "${election}" stopped before this instance became the leader`,
  // Stuck leader work (stuckAfterMs, resignWhenStuck).
  stuckWork: (election: string, handler: string, runningMs: number, stuckAfterMs: number) =>
    `leader election "${election}": ${handler} has been running for ${Math.round(runningMs)} ms, longer than stuckAfterMs (${stuckAfterMs} ms)`,
  unhealthyStuck: (handler: string, runningMs: number, stuckAfterMs: number) =>
    `stuck: ${handler} has been running for ${Math.round(runningMs)} ms (stuckAfterMs ${stuckAfterMs})`,
  runHandlerName: (method: string, name: string) =>
    `${method}(name, fn): name must be a non-empty string (the handler label of metrics and stuck-work reports) followed by the function to run (got ${JSON.stringify(name)})`,
  resigningStuck: (election: string, handler: string) =>
    `leader election "${election}": resigning because ${handler} is stuck (resignWhenStuck); its signal is aborted so another replica takes over`,
  resigningStuckAgain: (election: string, handler: string, term: number) =>
    `leader election "${election}": won term ${term} while ${handler} is still stuck; resigning again (resignWhenStuck: at most once per term)`,
  // Health: a lease held without acting (lib/leadership/step-down.state.ts `notActing`).
  unhealthyNotActing: (term: number | undefined, why: string) =>
    `holds the lease${term === undefined ? '' : ` (term ${term})`} but does not act as leader: ${why}`,
  notActingOverdue: (what: string, forMs: number, boundMs: number) =>
    `${what} has lasted ${Math.round(forMs)} ms, longer than its bound (${boundMs} ms)`,
  notActingUnexplained: 'no handover drain, resignation or shutdown is under way for this term',
  notActingShutdown: 'the shutdown drain',
  notActingHandover: 'the handover drain',
  notActingResign: 'the resignation',
  // Once-per-tick cron runs (issue 16).
  perTickWithoutCron: (target: string) =>
    `@LeaderOnly({ once: 'per-tick' }) on ${target}: the method has no @Cron() schedule (from @nestjs/schedule); once per tick works on cron jobs only`,
  tickSkippedRecorded: (job: string, fireTime: string) => `skipped ${job} tick ${fireTime}: already run by a leader`,
  tickSkippedStale: (job: string, fireTime: string) =>
    `skipped ${job} tick ${fireTime}: its record waited behind a slow store call past its term or its retry budget`,
  tickRecordFailed: (job: string, fireTime: string, reason: string) =>
    `skipped ${job} tick ${fireTime}: could not record the run before starting it (${reason})`,
  tickRecordRetry: (job: string, fireTime: string, reason: string) =>
    `${job} tick ${fireTime}: recording the run failed (${reason}); retrying within the tick`,
  tickRecordedAhead: (job: string, recorded: string, now: string, aheadMs: number) =>
    `${job}: the last run recorded is the tick of ${recorded}, ${Math.round(aheadMs)} ms ahead of this replica's clock (${now}): a leader with a clock running ahead recorded it, and this job's ticks are skipped until this clock passes it. Synchronise the hosts' clocks (NTP)`,
  tickCatchUp: (job: string, fireTime: string) =>
    `${job}: catching up tick ${fireTime}, which no leader ran (missed: 'catch-up')`,
  perTickNeedsExpression: (target: string) =>
    `@LeaderOnly({ once: 'per-tick' }) on ${target}: the @Cron() time is not a cron expression string (a one-off Date has no ticks to count)`,
  perTickNoCronPackage: (target: string, reason: string) =>
    `@LeaderOnly({ once: 'per-tick' }) on ${target}: could not load the "cron" package (a dependency of @nestjs/schedule) to compute fire times: ${reason}`,
  tickCatchUpFailed: (job: string, reason: string) => `${job}: catch-up after election failed: ${reason}`,
  // Issue 24, defect 4: a job's record is found by its key alone.
  tickJobKeyClash: (key: string, election: string, first: string, second: string) =>
    `@LeaderOnly({ once: 'per-tick' }): ${second} and ${first} would both record their runs under the key "${key}" of election "${election}" and take each other's ticks. The key is the @Cron() name, else Class.method: give one of them its own schedule name, e.g. @Cron(expression, { name: 'reports.run' })`,
  ticksLost: (job: string, count: number, first: string, last: string, moreSinceLastWarning: number) =>
    `${job}: ${count === 1 ? `the tick of ${first} ran` : `${count} ticks (${first} to ${last}) ran`} on no replica${moreSinceLastWarning > 0 ? ` (and ${moreSinceLastWarning} more since the last warning)` : ''}: a run that starts less than min(500 ms, ¼ period) before the next fire time counts as that next tick; a failover, a paused or overloaded process or an unreachable store lose ticks too`,
} as const;
