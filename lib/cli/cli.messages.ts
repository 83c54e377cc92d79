/**
 * Every text the CLI prints of its own. None quotes a connection string, key, SAS or password:
 * they name the option or environment variable that holds one, never its value.
 */
export const cliMessages = {
  // Usage (exit 2).
  storeRequired: (env: string, kinds: readonly string[]) =>
    `--store is required (or set ${env}): one of ${kinds.join(', ')}`,
  storeUnknown: (source: string, value: string, kinds: readonly string[]) =>
    `${source} must be one of ${kinds.join(', ')} (got ${JSON.stringify(value)})`,
  connectionRequired: (env: string) => `no connection to the store: set ${env} or pass --connection`,
  optionNotForStore: (option: string, store: string, stores: readonly string[]) =>
    `${option} applies to --store ${stores.join(' or ')} only, not ${store}`,
  storeOptionsRefused: (store: string, connectionSource: string, reason: string) =>
    `the ${store} store refused its options (connection from ${connectionSource}): ${reason}`,
  badElection: (value: string) =>
    `election names are 1-200 letters, digits, '.', '_' or '-', starting with a letter or digit (got ${JSON.stringify(value)})`,
  badInteger: (option: string, min: number, max: number) =>
    `${option} must be a whole number of milliseconds from ${min} to ${max}`,
  badText: (option: string, max: number) => `${option} must be non-empty text of at most ${max} characters`,

  // Outcomes.
  storeFailed: (store: string, kind: string, message: string) =>
    `${store} ${kind === 'fatal' ? 'refused the request' : 'is unreachable or failing'}: ${message}`,
  unsupported: (store: string, what: string, methods: string) =>
    `${store} cannot ${what}: it implements no ${methods} (a store of an older version, or a third-party store)`,
  noLeader: (election: string, reservedFor: string | undefined) =>
    `nobody leads "${election}" right now, so there is no leader to hand over from${
      reservedFor ? ` (the free lease is reserved for ${reservedFor} by a directed handover)` : ''
    }`,
  alreadyLeads: (election: string, identity: string, term: number) =>
    `${identity} already leads "${election}" (term ${term}): nothing to hand over`,
  handoverRequested: (election: string, from: string, term: number, to: string | undefined, id: string) =>
    `handover of "${election}" requested: ${from} (term ${term}) → ${to ?? 'any other replica'} (request ${id})`,
  waiting: (election: string, timeoutMs: number) => `waiting up to ${timeoutMs} ms for a new leader of "${election}"…`,
  newLeader: (election: string, holder: string, term: number, waitedMs: number) =>
    `"${election}" is now led by ${holder} (term ${term}), after ${waitedMs} ms`,
  waitTimedOut: (election: string, timeoutMs: number, holder: string | undefined, term: number) =>
    `no handover of "${election}" within ${timeoutMs} ms: ${holder ? `${holder} leads (term ${term})` : 'nobody leads'}`,
  pollFailed: (message: string) => `a poll failed, still waiting: ${message}`,
  noElections: 'no election has a lease record in this namespace',
  watchFailed: (message: string) => `refresh failed, retrying: ${message}`,
  driverMissing: (store: string, driver: string) =>
    `--store ${store} needs the package ${driver}, which is not installed: npm install ${driver}`,
  unexpected: (message: string) => `unexpected error: ${message}`,

  // jobs (issue 28).
  badJobName: (value: string) =>
    `job names are 1-500 characters without control characters, as the app names them (@Cron name, else Class.method); got ${JSON.stringify(value.slice(0, 60))}`,
  noCatalogue: (election: string) =>
    `"${election}" has no job catalogue: no leader of a version with job control has led it yet (a leader publishes its jobs when its term starts), or the election name is wrong`,
  unknownJob: (job: string, election: string, known: readonly string[]) =>
    `"${election}" has no job ${JSON.stringify(job)}; its jobs: ${known.length === 0 ? 'none' : known.map((name) => JSON.stringify(name)).join(', ')}`,
  jobNowhere: (job: string, catalogues: number) =>
    `no election of this namespace has a job ${JSON.stringify(job)} (${catalogues} election(s) publish a job catalogue); see \`jobs list\``,
  jobAmbiguous: (job: string, elections: readonly string[]) =>
    `job ${JSON.stringify(job)} is in several elections (${elections.join(', ')}): pass --election`,
  noJobs:
    'no election in this namespace publishes a job catalogue (a leader of a version with job control publishes its jobs when its term starts)',
  noCatalogueNote: (election: string) =>
    `"${election}": no job catalogue (no leader of a version with job control yet)`,
  jobPaused: (job: string, election: string, by: string, reason: string | undefined) =>
    `job ${JSON.stringify(job)} of "${election}" paused by ${by}${reason ? ` (${reason})` : ''}: the leader skips its scheduled runs from its next read of the board until it is resumed`,
  jobAlreadyPaused: (job: string, election: string, by: string, agoMs: string) =>
    `job ${JSON.stringify(job)} of "${election}" is already paused for that reason, by ${by} ${agoMs} ago: nothing changed`,
  jobResumed: (job: string, election: string) =>
    `job ${JSON.stringify(job)} of "${election}" resumed: the leader runs it on schedule again from its next read of the board`,
  jobNotPaused: (job: string, election: string) =>
    `job ${JSON.stringify(job)} of "${election}" is not paused: nothing changed`,
  runRequested: (job: string, election: string, id: string) =>
    `run of job ${JSON.stringify(job)} in "${election}" requested (command ${id}): the leader runs it once after its next read of the board, paused or not`,
  runNoLeader: (election: string) =>
    `nobody leads "${election}" right now: the next leader runs it when its term starts`,
  runQueueFull: (message: string) => `the job board refused the command: ${message}`,
  runWaiting: (timeoutMs: number) => `waiting up to ${timeoutMs} ms for the run to finish…`,
  runStarted: (by: string, term: number) => `running on ${by} (term ${term})…`,
  runFinished: (job: string, by: string, term: number, outcome: string, duration: string, error: string | undefined) =>
    `job ${JSON.stringify(job)} ran on ${by} (term ${term}): ${outcome} in ${duration}${error ? `: ${error}` : ''}`,
  runWaitTimedOut: (id: string, timeoutMs: number, state: string) =>
    `no finished run of command ${id} within ${timeoutMs} ms: ${state}`,
  runStillQueued: 'still queued, no leader has claimed it (is a leader of a version with job control running?)',
  runStateUnknown: 'the job board could not be read to tell whether it is still queued',
  runClaimedNoRecord: 'claimed by the leader, but no run of it recorded yet',
  runStillRunning: (by: string, term: number) => `still running on ${by} (term ${term})`,
  noRuns: (job: string, election: string) => `no recorded run of job ${JSON.stringify(job)} in "${election}"`,

  // --help.
  exitCodes: `Exit codes:
  0  ok
  1  unexpected error
  2  usage error (a bad or missing option)
  3  the store is unreachable or refused the request (jobs run: the run-now queue is full)
  4  no leader to hand over from
  5  handover --wait or jobs run --wait timed out
  6  the store lacks the capability (requestHandover / readHandover / listElections / readState / readRecord / writeRecord)
  7  jobs run --wait: the run ended with an error or was aborted`,
  environment: (store: string, connection: string) => `Environment:
  ${store}       the store, when --store is not given
  ${connection}  the connection (URL, connection string or endpoints); prefer it to
                              --connection, which other users of the machine can see in the process list`,
} as const;
