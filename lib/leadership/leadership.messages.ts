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
  // The preferred leader (issue 28): the `priority` option.
  priorityUnsupported: (election: string) =>
    `priority is set but the store of "${election}" has no handover requests (requestHandover/readHandover/clearHandover): a replica of higher priority cannot ask for the lease, it only leads when it wins an election`,
  priorityRequestFailed: (election: string, message: string) =>
    `priority: could not ask for election "${election}" (${message}); trying again later`,
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
  // Job control (issue 28): the leader applying operators' commands, run history, the service's calls.
  jobs: {
    nameClash: (job: string, election: string, first: string, second: string) =>
      `two scheduled @LeaderOnly jobs of election "${election}" are named ${JSON.stringify(job)} (${first} and ${second}): a job is named by its schedule's name, else Class.method, and commands and history find it by that name alone; give one of them its own schedule name, e.g. @Cron(expression, { name: 'reports.nightly' })`,
    controlUnsupported: (election: string, store: string) =>
      `election "${election}" has scheduled @LeaderOnly jobs but ${store} lacks shared records or leader state: job control is off there (the jobs run as scheduled; pauseJob, resumeJob, runJobNow, jobs and jobHistory reject)`,
    noStore: (election: string) =>
      `job control of election "${election}" needs a store with shared records and leader state; this module has no store (the testing kit)`,
    unknownJob: (job: string, election: string | undefined, known: readonly string[]) =>
      `no scheduled @LeaderOnly job named ${JSON.stringify(job.slice(0, 200))} ${election === undefined ? 'in any election of this application' : `in election "${election}"`}; ${known.length === 0 ? 'it has none' : `it has ${known.map((name) => JSON.stringify(name)).join(', ')}`}`,
    ambiguousJob: (job: string, elections: readonly string[]) =>
      `job ${JSON.stringify(job)} runs in several elections (${elections.map((name) => `"${name}"`).join(', ')}): pass { election } to say which`,
    boardReadFailed: (election: string, term: number, reason: string) =>
      `leader election "${election}" (term ${term}): could not read the job board (${reason}); every scheduled @LeaderOnly job of the election is skipped until a read succeeds (tried again at the next read turn)`,
    boardReadFailedAfterRead: (election: string, term: number, reason: string, readAt: string) =>
      `leader election "${election}" (term ${term}): could not read the job board (${reason}); its jobs keep following the board as read at ${readAt}, and a command recorded since waits for the next read that succeeds (tried again at the next read turn)`,
    boardReadAgain: (election: string) =>
      `leader election "${election}": the job board could be read again; its jobs run as scheduled`,
    skippedUnread: (job: string, election: string) =>
      `skipped job ${JSON.stringify(job)}: the job board of "${election}" has not been read in this term (a pause might be recorded there)`,
    pausedSkip: (
      label: string,
      job: string,
      election: string,
      by: string | undefined,
      at: string | undefined,
      reason: string | undefined,
    ) =>
      `skipped ${label}: job ${JSON.stringify(job)} of "${election}" is paused${by === undefined ? '' : ` by ${by} since ${at}`}${reason === undefined ? '' : ` (${reason})`} (further skips are counted, not logged, until its pause changes)`,
    pauseApplied: (election: string, job: string, by: string, at: string, reason: string | undefined) =>
      `leader election "${election}": job ${JSON.stringify(job)} paused by ${by} at ${at}${reason === undefined ? '' : ` (reason: ${reason})`}; its scheduled runs are skipped until it is resumed`,
    resumeApplied: (election: string, job: string, by: string | undefined, at: string | undefined) =>
      `leader election "${election}": job ${JSON.stringify(job)} resumed${by === undefined ? '' : ` by ${by} at ${at}`}; it runs as scheduled again`,
    runNowApplied: (election: string, job: string, by: string, at: string, id: string) =>
      `leader election "${election}": running job ${JSON.stringify(job)} now, as ${by} asked at ${at} (command ${id})`,
    runNowReturned: (election: string, job: string, id: string, by: string) =>
      `leader election "${election}": run-now command ${id} of job ${JSON.stringify(job)} (asked by ${by}) was claimed but the term ended before it could run; it is back on the job board for the next leader`,
    runNowDropped: (election: string, job: string, id: string, by: string, reason: string) =>
      `leader election "${election}": run-now command ${id} of job ${JSON.stringify(job)} (asked by ${by}) was claimed but the term ended before it could run, and could not be put back on the job board (${reason}); it does not run (at most once): ask again`,
    runNowQueueFull: (limit: number) => `its run-now queue already holds ${limit} commands`,
    runNowFailed: (election: string, job: string, id: string, reason: string) =>
      `leader election "${election}": job ${JSON.stringify(job)}, run now (command ${id}), failed: ${reason}`,
    claimFailed: (election: string, reason: string) =>
      `leader election "${election}": could not claim the run-now commands on the job board (${reason}); trying again after the next read of the board (if the claim landed and only its answer was lost, the commands it took do not run, at most once: \`leaderlease jobs list\` shows what is still pending)`,
    catalogueFailed: (election: string, reason: string) =>
      `leader election "${election}": could not publish the job catalogue (${reason}); trying again after the next read of the board`,
    historyWriteFailed: (election: string, job: string, reason: string) =>
      `leader election "${election}": could not record the runs of job ${JSON.stringify(job)} (${reason}); trying again at the next renewal`,
    historyReplaced: (reason: string) => `${reason}; the leader starts a fresh history over it`,
    catchUpSkipped: (job: string, why: 'paused' | 'unread') =>
      `${job}: no catch-up after election: ${why === 'paused' ? 'the job is paused' : 'the job board could not be read in this term'}`,
  },
} as const;
