import { STORABLE_TEXT } from '../shared/messages.js';

/**
 * The texts of the elector (options, log lines, revocation reasons, handover requests). None may include
 * a connection string, account key or SAS: callers pass only names, numbers and already-redacted messages.
 */
export const electionMessages = {
  // Option validation (thrown at construction / app startup).
  optionRequired: (option: string, what: string) => `${option} is required: ${what}`,
  optionNotPositive: (option: string, value: unknown) =>
    `${option} must be a positive finite number of milliseconds (got ${String(value)})`,
  optionOrder: (option: string, value: number, lower: string, lowerValue: number, upper: string, upperValue: number) =>
    `${option} must be greater than ${lower} (${lowerValue}) and less than ${upper} (${upperValue}); got ${value}`,
  leaseDurationOutOfRange: (store: string, value: number, min: number, max: number, reason: string) =>
    `leaseDurationMs must be between ${min} and ${max} ms (${formatSeconds(min)}–${formatSeconds(max)}) for ${store}: ${reason}; got ${value}`,
  leaseDurationStep: (store: string, value: number, step: number) =>
    `leaseDurationMs must be a multiple of ${step} ms for ${store}; got ${value}`,
  invalidIdentity: (value: unknown) =>
    `identity must be a non-empty string of at most 256 characters, ${STORABLE_TEXT}, so every store can keep it (got ${JSON.stringify(value)})`,
  invalidAdvertise: (value: unknown) =>
    `advertise must be a non-empty string of at most 1024 characters, ${STORABLE_TEXT}, e.g. the replica's internal URL (got ${typeof value === 'string' ? `${value.length} characters` : String(value)})`,
  /** The reservation a directed handover writes for a standby heir must fit the store's longest lease. */
  standbyPollForStore: (store: string, maxLeaseMs: number, callTimeoutMs: number) =>
    ` for ${store}: a directed handover reserves the freed lease for a standby heir for standbyPollMs × 1.15 + the call timeout (renewDeadlineMs − renewIntervalMs = ${callTimeoutMs} ms), and ${store} keeps a reservation at most as long as its longest lease (${maxLeaseMs} ms)`,
  standbyPollNoneFits: (store: string, retryIntervalMs: number, maxLeaseMs: number, callTimeoutMs: number) =>
    `activeFollowers: no standbyPollMs fits ${store}: a directed handover reserves the freed lease for a standby heir for standbyPollMs × 1.15 + the call timeout (renewDeadlineMs − renewIntervalMs = ${callTimeoutMs} ms), at most ${store}'s longest lease (${maxLeaseMs} ms), and standbyPollMs may not be below retryIntervalMs (${retryIntervalMs}): shorten retryIntervalMs or renewDeadlineMs − renewIntervalMs`,
  optionRange: (option: string, value: unknown, allowed: string) =>
    `${option} must be ${allowed} (got ${String(value)})`,
  clockWithoutWallNow:
    'clock must have wallNow() (wall-clock epoch ms) besides now() and its timers: the elector bounds a term by both clocks; for a clock written for 0.1.0, add wallNow: () => Date.now()',
  clockInvalid: (missing: readonly string[], value: unknown) =>
    `clock must be a Clock with now(), wallNow(), setTimeout() and clearTimeout() (e.g. FakeClock from @leaderlease/nestjs/testing); ${value === null || typeof value !== 'object' ? `got ${value === null ? 'null' : typeof value}` : `it has no ${missing.map((name) => `${name}()`).join(', ')}`}`,
  inMemoryInProduction: (store: string) =>
    `store: ${store} keeps leases in this process's memory, and NODE_ENV is production: every replica would elect itself leader. Use a shared store (AzureBlobLeaseStore, PostgresLeaseStore, MySqlLeaseStore, RedisLeaseStore, EtcdLeaseStore), or, for an app that runs as one single process, new InMemoryLeaseStore({ allowInProduction: true })`,
  standbyPollWithoutActive:
    'standbyPollMs needs activeFollowers: without it every follower polls every retryIntervalMs',
  invalidElection: (value: unknown) =>
    `election must be a non-empty string of at most 200 letters, digits, '.', '_' or '-' (got ${JSON.stringify(value)})`,

  // Elector log lines.
  elected: (election: string, identity: string, term: number) =>
    `${identity} is now the leader of "${election}" (term ${term})`,
  revoked: (election: string, identity: string, term: number, reason: string) =>
    `${identity} stopped leading "${election}" (term ${term}): ${reason}`,
  leaderChanged: (election: string, leaderId: string | undefined) =>
    leaderId ? `leader of "${election}" is ${leaderId}` : `"${election}" has no known leader`,
  storeFailing: (election: string, store: string, kind: string, message: string) =>
    `leader election "${election}": ${store} ${kind === 'fatal' ? 'refused the request' : 'is unreachable or failing'} — staying a follower until it answers: ${message}`,
  storeStillFailing: (election: string, store: string, attempts: number) =>
    `leader election "${election}": ${store} has failed ${attempts} consecutive calls`,
  storeRecovered: (election: string, store: string) => `leader election "${election}": ${store} answers again`,
  renewFailed: (election: string, message: string, remainingMs: number) =>
    `leader election "${election}": renew failed (${message}); still leading for at most ${Math.max(0, Math.round(remainingMs))} ms`,
  releaseFailed: (election: string, message: string) =>
    `leader election "${election}": release failed (${message}); the lease will expire on its own`,
  reservationRefused: (election: string, to: string, reserveMs: number, message: string) =>
    `leader election "${election}": the release reserving the lease for ${JSON.stringify(to)} for ${reserveMs} ms failed (${message}); releasing without a reservation, so the election is not blocked until the lease expires (any replica, not only ${JSON.stringify(to)}, may lead next)`,
  handoverUnsupported: (store: string) =>
    `${store} does not support handover requests (it implements no requestHandover/readHandover/clearHandover); use a built-in store`,
  /** How a handover's `requestedBy` must look. */
  requestedByForm: `a string of at most 300 characters, ${STORABLE_TEXT}`,
  standbySlotFailed: (election: string, message: string) =>
    `leader election "${election}": standby slot call failed (${message}); trying again at the next standby poll`,
  watchFailed: (election: string, message: string) =>
    `leader election "${election}": release notifications unavailable (${message}); polling instead`,

  alreadyStarted: (election: string) => `Elector for "${election}" was already started`,
  notRunning: (state: string) => `elector is ${state}`,
  unhealthyFailing: (failures: number, message: string) => `store failing for ${failures} calls: ${message}`,
  termEnded: (reason: string) => `leadership ended: ${reason}`,
  notLeading: 'not the leader',

  // Revocation reasons (the `reason` of a 'revoked' event).
  reasonDeadline: 'renew deadline passed without a successful renewal',
  reasonLost: 'the store says the lease is no longer ours',
  reasonResigned: 'resigned',
  reasonStopped: 'stopped',
  reasonHandover: (to: string | undefined) =>
    to === undefined ? 'handed over on request (re-election)' : `handed over on request to ${to}`,
  reasonHandoverTermEnded: 'the term ended before the drain finished (nothing left to hand over)',
  handoverNoLeader: (election: string) =>
    `leader election "${election}": nobody leads it right now, so there is nothing to hand over; the next leader is elected within the failover bound`,
  handoverBadOption: (option: string, allowed: string, value: unknown) =>
    `requestHandover(): ${option} must be ${allowed} (got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 60)) : String(value)})`,
  handoverAlreadyLeads: (election: string, to: string) =>
    `leader election "${election}": handover to ${to} requested, and ${to} already leads it: nothing to do`,
  handoverSpreadYielded: (election: string, term: number) =>
    `leader election "${election}": spread request not recorded: a request of another kind (e.g. an operator's) is pending for term ${term}, and it stands`,
  handoverRecorded: (
    election: string,
    request: { id: string; to?: string; requestedBy: string; reason: string; term: number },
  ) =>
    `leader election "${election}": handover request ${request.id} recorded for term ${request.term} (${request.reason}, by ${request.requestedBy}, to ${request.to ?? 'any other replica'})`,
  handoverHonouring: (
    election: string,
    identity: string,
    request: { id: string; to?: string; requestedBy: string; reason: string; term: number },
  ) =>
    `leader election "${election}": ${identity} honours handover request ${request.id} (${request.reason}, asked by ${request.requestedBy}, to ${request.to ?? 'any other replica'}): draining, then releasing term ${request.term}`,
  handoverTakenOver: (
    election: string,
    replicas: string,
    operator: { id: string; to?: string; requestedBy: string; reason: string },
  ) =>
    `leader election "${election}": ${operator.reason} request ${operator.id} (asked by ${operator.requestedBy}, to ${operator.to ?? 'any other replica'}) came while draining for request ${replicas}: the lease goes where it says`,
  resignedToOperator: (election: string, operator: { id: string; to?: string; requestedBy: string; reason: string }) =>
    `leader election "${election}": resigning while ${operator.reason} request ${operator.id} (asked by ${operator.requestedBy}, to ${operator.to ?? 'any other replica'}) is pending: the lease goes where it says`,
  handoverDone: (election: string, id: string, to: string | undefined) =>
    `leader election "${election}": handover request ${id} done: lease released${to === undefined ? '; this replica sits out one round' : `, reserved for ${to}`}`,
  handoverDeclined: (election: string, id: string, why: string) =>
    `leader election "${election}": handover request ${id} declined: ${why}`,
  handoverAbandoned: (election: string, id: string, why: string) =>
    `leader election "${election}": handover request ${id} not completed: ${why}`,
  handoverPinned: (holdMs: number) =>
    `a directed handover made this replica the leader; spread and priority leave it here for ${holdMs} ms`,
  handoverNotAhead: (mine: number, theirs: number) =>
    `spread: this replica leads ${mine} election(s), the requester ${theirs}; a move pays off only from a difference of 2`,
  // The preferred leader (issue 28): the `priority` option.
  handoverNotHigher: (mine: number, theirs: number | undefined) =>
    `priority: this replica's priority is ${mine}, the requester's ${theirs ?? 'unknown'}; only a higher priority takes the lease`,
  handoverPriorityUnbalances: (mine: number, theirs: number) =>
    `priority: this replica leads ${mine} election(s), the requester ${theirs}; with spread, a move by priority goes only to a replica leading fewer`,
  handoverPriorityYielded: (election: string, term: number) =>
    `leader election "${election}": priority request not recorded: a request of another kind (e.g. an operator's) is pending for term ${term}, and it stands`,
  foldingOff: (election: string, message: string) =>
    `election "${election}": the store refused a folded renewal (${message}); renewing alone from now on, with separate calls for what rode on it`,
  readEveryNth: (store: string, value: unknown) =>
    `${store}: readEveryNthRenewal must be an integer from 1 to 20 (got ${String(value)})`,
  handoverCheckFailed: (election: string, message: string) =>
    `leader election "${election}": could not read the pending handover request (${message}); trying again at the next read turn`,

  // Elector: timing safety (issue 11).
  marginTooSmall: (lease: number, deadline: number, minimum: number, floorMs: number, fraction: string) =>
    `leaseDurationMs (${lease}) - renewDeadlineMs (${deadline}) = ${lease - deadline} ms is too small a safety margin: ` +
    `it must be at least ${minimum} ms (the larger of ${floorMs} ms and ${fraction} of leaseDurationMs), because a ` +
    'leader steps down up to one event-loop stall after its renew deadline and that lag must end before the store ' +
    'lets another instance take the lease; lower renewDeadlineMs or raise leaseDurationMs',
  releaseAfterStop: (election: string, term: number) =>
    `leader election "${election}": a late answer won term ${term} after stop() had finished; not releasing it (nothing may start after stop), it expires by itself`,

  // Leader state (issue 16).
  stateNotLeader: (election: string) =>
    `leader election "${election}": writeState() refused: this instance is not the leader (or its term has just ended), so it may not write leader state`,
  stateKeyReserved: (key: string) =>
    `leader state key ${JSON.stringify(key)} is reserved: keys starting with "tick:" hold the library's once-per-tick records (@LeaderOnly({ once: 'per-tick' })); use another key`,

  // Job control: the job board, run history and catalogue (issue 28).
  jobs: {
    stateKeyReserved: (key: string) =>
      `leader state key ${JSON.stringify(key)} is reserved: keys starting with "jobs:" hold the library's job run history and catalogue; use another key`,
    badField: (field: string, allowed: string, value: unknown) =>
      `job command: ${field} must be ${allowed} (got ${typeof value === 'string' ? `${JSON.stringify(value.slice(0, 60))}${value.length > 60 ? `… (${value.length} characters)` : ''}` : String(value)})`,
    runNowQueueFull: (limit: number) =>
      `the job board already holds ${limit} run-now commands no leader has claimed (is a leader of a version with job control running?); try again once it has caught up`,
    boardTooLarge: (election: string, bytes: number, limit: number) =>
      `the job board of election "${election}" would be ${bytes} bytes of JSON, more than a shared record holds (${limit} bytes); resume jobs or let the leader claim its run-now commands first`,
    boardCorrupt: (election: string, why: string) =>
      `the job board of election "${election}" (shared record "jobs") is not one this library wrote (${why}); nothing was written over it: delete the record to start an empty board`,
    boardNewer: (election: string, version: number) =>
      `the job board of election "${election}" was written by a newer version of @leaderlease/nestjs (board version ${version}); this version neither reads nor changes it: upgrade this replica or the CLI`,
    boardContended: (election: string, attempts: number) =>
      `the job board of election "${election}" changed under every one of ${attempts} attempts to write it (many writers at once); try again`,
    recordsUnsupported: (store: string) =>
      `${store} does not support shared records (it implements no readRecord/writeRecord), which job control keeps its commands in; use a built-in store`,
    historyCorrupt: (election: string, job: string, why: string) =>
      `the run history of job ${JSON.stringify(job)} in election "${election}" is not one this library wrote (${why})`,
    catalogueCorrupt: (election: string, why: string) =>
      `the job catalogue of election "${election}" is not one this library wrote (${why})`,
  },
} as const;

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
