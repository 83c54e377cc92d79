import { sharedMessages } from '../shared/messages.js';

/** The form of text every store can keep (lib/shared/identity.ts `isStorableText`). */
const STORABLE_TEXT =
  'well-formed Unicode (no lone surrogate) without control characters (U+0000–U+001F, U+007F–U+009F)';

/**
 * Every user-facing text in one place. None of them may include a connection string, account
 * key or SAS: callers pass only names, numbers and already-redacted error messages.
 */
export const messages = {
  // The shared layer's texts (store call aborted / timed out) live in lib/shared/messages.ts.
  ...sharedMessages,

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
  standbyPollWithoutActive:
    'standbyPollMs needs activeFollowers: without it every follower polls every retryIntervalMs',
  invalidElection: (value: unknown) =>
    `election must be a non-empty string of at most 200 letters, digits, '.', '_' or '-' (got ${JSON.stringify(value)})`,

  // Store outcomes.
  leaseLost: (election: string) => `the lease of election "${election}" is no longer ours`,

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
  /** How a handover's `to` (and a release's `handoverTo`) must look: an identity every store can keep. */
  identityForm: `a non-empty identity of at most 256 characters, ${STORABLE_TEXT}`,
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
  handoverDone: (election: string, id: string, to: string | undefined) =>
    `leader election "${election}": handover request ${id} done: lease released${to === undefined ? '; this replica sits out one round' : `, reserved for ${to}`}`,
  handoverDeclined: (election: string, id: string, why: string) =>
    `leader election "${election}": handover request ${id} declined: ${why}`,
  handoverAbandoned: (election: string, id: string, why: string) =>
    `leader election "${election}": handover request ${id} not completed: ${why}`,
  handoverPinned: (holdMs: number) =>
    `a directed handover made this replica the leader; spread leaves it here for ${holdMs} ms`,
  handoverNotAhead: (mine: number, theirs: number) =>
    `spread: this replica leads ${mine} election(s), the requester ${theirs}; a move pays off only from a difference of 2`,
  handoverCheckFailed: (election: string, message: string) =>
    `leader election "${election}": could not read the pending handover request (${message}); trying again at the next renewal`,

  // ---- AzureBlobLeaseStore (lib/stores/azure/) -----------------------------------------
  // Built from option names, status codes, error codes and request ids only: never from a raw SDK
  // message, which may quote a URL with its SAS.
  azure: {
    leaseDurationReason: 'Azure Blob leases last 15 to 60 seconds, in whole seconds',
    leaseDurationInvalid: (value: number) =>
      `leaseDurationMs must be a whole number of seconds from 15000 to 60000 for AzureBlobLeaseStore; got ${value}`,
    optionsExclusive: (given: readonly string[]) =>
      `AzureBlobLeaseStore: pass exactly one of connectionString, url or containerClient (got ${given.length ? given.join(' and ') : 'none of them'})`,
    optionInvalid: (option: string, expected: string) => `AzureBlobLeaseStore: ${option} ${expected}`,
    connectionStringInvalid:
      'AzureBlobLeaseStore: connectionString is not a valid Azure Storage connection string (expected "DefaultEndpointsProtocol=https;AccountName=…;AccountKey=…;EndpointSuffix=core.windows.net", "BlobEndpoint=…;SharedAccessSignature=…" or "UseDevelopmentStorage=true")',
    containerName: (value: unknown) =>
      `AzureBlobLeaseStore: container must be 3–63 lowercase letters, digits or single hyphens, starting and ending with a letter or digit (got ${JSON.stringify(value)})`,
    containerConflict: (fromUrl: string, option: string) =>
      `AzureBlobLeaseStore: url names container "${fromUrl}" but container is "${option}"; pass an account URL with container, or a container URL alone`,
    renewedForeignLease: (election: string) =>
      `the lease of election "${election}" is no longer ours (the service answered the renewal for another lease id)`,
    termNotWritten: (election: string, detail: string) =>
      `the lease of election "${election}" was acquired but its term could not be recorded, so it was given back: ${detail}`,
    refused: (operation: string, container: string, failure: AzureFailure, hint: string) =>
      `AzureBlobLeaseStore: ${operation} on container "${container}" was refused (${describeAzureFailure(failure)}): ${hint}`,
    failed: (operation: string, container: string, failure: AzureFailure) =>
      `AzureBlobLeaseStore: ${operation} on container "${container}" failed (${describeAzureFailure(failure)}); will retry`,
    hintRbac:
      'grant the identity the RBAC role "Storage Blob Data Contributor" scoped to the container (or its storage account); new role assignments can take a few minutes to apply. If the account has a firewall or private endpoint, also allow this client',
    hintToken:
      'the token credential was rejected: check its tenant, client id/secret or managed identity, and that it requests the storage audience (https://storage.azure.com/.default)',
    hintCredentialUnavailable:
      'the token credential could not get a token: configure a managed identity, workload identity, environment credentials or `az login` for DefaultAzureCredential',
    hintSharedKey:
      'the service rejected the request signature: check the account name and account key (AccountKey in the connection string, or the StorageSharedKeyCredential)',
    hintSharedKeyDisabled:
      'shared key access is disabled on this storage account: use a TokenCredential (e.g. DefaultAzureCredential) with the RBAC role "Storage Blob Data Contributor" on the container',
    hintSas:
      'check the SAS: it must be valid now (start and expiry), be signed for the blob service, and grant read, write and create on the container',
    hintNetworkRules:
      "the storage account's firewall or network rules block this client: allow its IP address or virtual network",
    hintAnonymous:
      'no credential was given: pass credential (a TokenCredential or StorageSharedKeyCredential) or a SAS URL',
    hintBadRequest:
      'the request was malformed: check the container name (3–63 lowercase letters, digits or hyphens), blobPrefix and election name',
    hintNotFound: 'the storage account or endpoint was not found: check the account name and the url / BlobEndpoint',
    hintOther: 'retrying will not help until the configuration is fixed',
  },

  // ---- PostgreSQL / MySQL / Redis / etcd stores (issue 6: lib/stores/{postgres,mysql,redis,etcd}.store.ts)
  // Built from option names, SQLSTATEs, error codes and class names only: never from a driver's
  // own message, which may quote the connection string.
  backend: {
    clientOrConnection: (store: string, client: string, connection: string) =>
      `${store}: pass exactly one of client (${client}) or connection (${connection})`,
    invalidIdentifier: (store: string, option: string, value: unknown, max: number) =>
      `${store}: ${option} must be an identifier of at most ${max} letters, digits or '_', not starting with a digit (got ${JSON.stringify(value)})`,
    invalidPrefix: (store: string, option: string, value: unknown) =>
      `${store}: ${option} must be a string of at most 200 printable characters without spaces (got ${JSON.stringify(value)})`,
    unreachable: (store: string, what: string) => `${store}: cannot reach the server (${what}); will retry`,
    failed: (store: string, what: string) => `${store}: request failed (${what}); will retry`,
    closed: (store: string) => `${store} is closed`,
    shortLeaseReason: (server: string) =>
      `expiry is judged by the ${server} server's clock, so short leases are safe, but below 1 s a single slow round trip or pause would cost leadership`,
  },
  postgres: {
    authFailed: (code: string) =>
      `PostgresLeaseStore: the server refused the login (${code}): check the user, password and database of the connection and the server's pg_hba.conf entry for this client`,
    permissionDenied: (table: string, createTable: boolean) =>
      `PostgresLeaseStore: permission denied (SQLSTATE 42501) on ${table}: GRANT SELECT, INSERT, UPDATE ON the table and USAGE on its schema to the role${createTable ? ', plus CREATE on the schema for the store to create the table (or create it beforehand with postgresLeaseTableSql() and pass createTable: false)' : ''}`,
    databaseMissing:
      'PostgresLeaseStore: the database named in the connection does not exist (SQLSTATE 3D000): create it or fix the database name',
    schemaMissing: (schema: string) =>
      `PostgresLeaseStore: schema "${schema}" does not exist (SQLSTATE 3F000): create it or change the schema option`,
    tableMissing: (table: string) =>
      `PostgresLeaseStore: table ${table} does not exist (SQLSTATE 42P01) and createTable is false: create it with postgresLeaseTableSql()`,
    incompatibleTable: (table: string, code: string) =>
      `PostgresLeaseStore: table ${table} does not have the expected columns (SQLSTATE ${code}): compare it with postgresLeaseTableSql() or use another table name`,
    valueRefused: (code: string) =>
      `PostgresLeaseStore: the server refused a value the store sent (SQLSTATE ${code}, a data exception), e.g. an identity, advertise value or handover field with U+0000, which no PostgreSQL text or jsonb value can hold; sending it again would fail the same way`,
  },
  mysql: {
    authFailed: (code: string) =>
      `MySqlLeaseStore: the server refused the login (${code}): check the user and password of the connection and that the account may connect from this host`,
    databaseDenied:
      'MySqlLeaseStore: the account may not use the database of the connection (ER_DBACCESS_DENIED_ERROR): GRANT SELECT, INSERT, UPDATE (and CREATE, for the store to create its table) ON <database>.* to it',
    databaseMissing:
      'MySqlLeaseStore: the database named in the connection does not exist (ER_BAD_DB_ERROR): create it or fix the database name',
    noDatabase:
      'MySqlLeaseStore: the connection selects no database (ER_NO_DB_ERROR): add the database to the connection settings or URL',
    permissionDenied: (table: string, code: string, createTable: boolean) =>
      `MySqlLeaseStore: permission denied on table ${table} (${code}): GRANT SELECT, INSERT, UPDATE ON the table to the account${createTable ? ', plus CREATE on the database for the store to create the table (or create it beforehand with mysqlLeaseTableSql() and pass createTable: false)' : ''}`,
    tableMissing: (table: string) =>
      `MySqlLeaseStore: table ${table} does not exist (ER_NO_SUCH_TABLE) and createTable is false: create it with mysqlLeaseTableSql()`,
    incompatibleTable: (table: string, code: string) =>
      `MySqlLeaseStore: table ${table} does not have the expected columns (${code}): compare it with mysqlLeaseTableSql() or use another table name`,
  },
  redis: {
    authFailed: (code: string) =>
      `RedisLeaseStore: the server refused the login (${code}): check the username and password of the connection (the ACL user and its password, or requirepass)`,
    permissionDenied: (prefix: string) =>
      `RedisLeaseStore: the ACL user may not run the store's commands or touch its keys (NOPERM): allow keys and channels ${JSON.stringify(`${prefix}*`)} and the commands EVAL, EVALSHA, GET, MGET, SET, INCR, PEXPIRE, PTTL, DEL, PUBLISH, SUBSCRIBE, HSET, HGET, SCAN, e.g. ACL SETUSER <user> ~${prefix}* &${prefix}* +eval +evalsha +get +mget +set +incr +pexpire +pttl +del +publish +subscribe +hset +hget +scan +ping`,
    replicaReadOnly:
      'RedisLeaseStore: the server is a read-only replica (READONLY): connect to the primary (or through Sentinel)',
  },
  etcd: {
    leaseDurationReason:
      'etcd lease TTLs are whole seconds, and etcd raises a TTL below its minimum (1.5 × the election timeout: 2 s with default settings) to that minimum, so a 1 s lease would silently last 2 s',
    authFailed: (what: string) =>
      `EtcdLeaseStore: etcd refused the credentials (${what}): check auth.username and auth.password of the connection, and that authentication is enabled on the cluster`,
    permissionDenied: (prefix: string) =>
      `EtcdLeaseStore: permission denied (PERMISSION_DENIED): give the user a role with readwrite permission on the key prefix ${JSON.stringify(prefix)}, e.g. etcdctl role grant-permission <role> --prefix=true readwrite ${JSON.stringify(prefix)}`,
  },

  // ---- Nest module (issue 3: module, service, @LeaderOnly, guard, hooks, health) ----------------
  optionNotNonNegative: (option: string, value: unknown) =>
    `${option} must be a non-negative finite number of milliseconds (got ${String(value)})`,
  optionNotBoolean: (option: string, value: unknown) => `${option} must be true or false (got ${String(value)})`,
  optionNotObject: (option: string, value: unknown) => `${option} must be an object (got ${String(value)})`,
  optionUnknown: (option: string, known: readonly string[]) =>
    `${option} is not a known option (known: ${known.join(', ')})`,
  notLeader: (election: string) => `This instance is not the leader of "${election}"; retry later.`,
  jobSkipped: (target: string, election: string, steppingDown: boolean) =>
    `skipped ${target}: ${steppingDown ? 'stepping down as leader' : 'not the leader'} of "${election}" (further skips are counted, not logged, until its leadership changes)`,
  refusedNonHttp: (type: string, election: string) =>
    `refused a ${type} call: not the leader of "${election}" (answered with the transport's Forbidden error)`,
  unbound: (target: string) =>
    `${target} is @LeaderOnly() but its instance is not bound to an application's leader election, so nobody can tell whether it may run: it was created with new, is request-scoped or transient, or its application is not initialised yet. Let Nest create it in an application that imports LeaderElectionModule and call init() (app.init() / moduleRef.init()); in unit tests import LeaderElectionTestingModule from nestjs-leader-election/testing, or bind an instance made with new by TestingLeadership.bind(instance)`,
  nonStaticProvider: (target: string) =>
    `${target} is @LeaderOnly() or a leadership hook in a request-scoped or transient provider: its calls cannot be tracked, so outside routes they throw (routes stay protected by LeaderOnlyGuard) and hooks are not called`,
  boundElsewhere: (target: string) =>
    `${target} is one instance shared by several applications; it stays bound to the first one's leader election`,
  hookFailed: (target: string, hook: string, error: unknown) =>
    `@${hook}() handler ${target} failed: ${error instanceof Error ? error.message : String(error)}`,
  handoverDrainWaiting: (election: string, id: string) =>
    `leader election "${election}": waiting for running leader-only work before honouring handover request ${id}`,
  spreadUnsupported: (election: string) =>
    `spread is on (several elections) but the store of "${election}" has no handover requests (requestHandover/readHandover/clearHandover): elections stay where they were won; set spread: false to silence this`,
  spreadRequestFailed: (election: string, message: string) =>
    `spread: could not ask for election "${election}" (${message}); trying again later`,
  hookBadElection: (kind: string, value: unknown) =>
    `the ${kind} hook decorator takes an election name, a non-empty string (got ${String(value)})`,
  unknownElection: (where: string, election: string, configured: readonly string[]) =>
    `${where}: this application has no election "${election}"; it has ${configured.map((name) => `"${name}"`).join(', ')}`,
  electionExists: (election: string) =>
    `addElection("${election}"): this application already runs an election of that name`,
  electionsOption: (detail: string) => `LeaderElectionModule options: ${detail}`,
  removeDefaultElection: (election: string) =>
    `removeElection("${election}"): the default election (the first configured) cannot be removed`,
  drainWaiting: (election: string, running: number, timeoutMs: number) =>
    `leader election "${election}": stepping down; waiting up to ${timeoutMs} ms for ${running} running @LeaderOnly call(s)`,
  drainTimedOut: (election: string, running: number, timeoutMs: number, graceMs: number) =>
    `leader election "${election}": ${running} @LeaderOnly call(s) still running after shutdownTimeoutMs (${timeoutMs} ms); their signal is aborted, releasing the lease within ${graceMs} ms`,
  stillRunningAtRelease: (election: string, running: number) =>
    `leader election "${election}": releasing the lease while ${running} leader-only call(s) or @OnElected() handler(s) still run; they ignored the aborted signal`,
  storeCloseFailed: (election: string, store: string, message: string) =>
    `leader election "${election}": closing ${store} failed: ${message}`,
  waitStopped: (election: string) => `leader election "${election}" stopped before this instance became the leader`,
  notAMethod: (target: string) => `@LeaderOnly() decorates methods; ${target} is not one`,
  // ---- Testing kit (nestjs-leader-election/testing) ------------------------------------------
  testingNotRunning: (method: string, state: string) =>
    `TestingLeadership.${method}(): the leader election is ${state === 'idle' ? 'not started: call await app.init() (or moduleRef.init()) first' : 'stopped: the application was closed'}`,
  testingInvalidTerm: (value: unknown) => `term must be a positive safe integer (got ${String(value)})`,
  testingInvalidIdentity: (value: unknown) =>
    `identity must be a non-empty string or undefined (got ${JSON.stringify(value)})`,
  testingBoundElsewhere: (target: string) =>
    `TestingLeadership.bind(): ${target} is already bound to another application's leader election`,
  testingNotAnObject: (value: unknown) => `TestingLeadership.bind() takes an object (got ${String(value)})`,

  // Elector: timing safety (issue 11).
  marginTooSmall: (lease: number, deadline: number, minimum: number, floorMs: number, fraction: string) =>
    `leaseDurationMs (${lease}) - renewDeadlineMs (${deadline}) = ${lease - deadline} ms is too small a safety margin: ` +
    `it must be at least ${minimum} ms (the larger of ${floorMs} ms and ${fraction} of leaseDurationMs), because a ` +
    'leader steps down up to one event-loop stall after its renew deadline and that lag must end before the store ' +
    'lets another instance take the lease; lower renewDeadlineMs or raise leaseDurationMs',
  releaseAfterStop: (election: string, term: number) =>
    `leader election "${election}": a late answer won term ${term} after stop() had finished; not releasing it (nothing may start after stop), it expires by itself`,

  // ---- Stores, added by issues 10/11/13 (lib/stores/**) -----------------------------------------
  // Never quote the rejected value: a connection string may carry a password.
  storeOptions: {
    connectionInvalid: (store: string, option: string, expected: string) =>
      `${store}: ${option} is not a valid connection string (expected ${expected}); check the configuration or the environment variable it comes from`,
  },

  // ---- Metrics (issue 15) --------------------------------------------------------------------------
  metricsWiring: (wiring: 'recording' | 'no-api' | 'no-sdk') =>
    wiring === 'recording'
      ? 'metrics: recording through the registered OpenTelemetry MeterProvider (meter "nestjs-leader-election")'
      : wiring === 'no-sdk'
        ? 'metrics: not recorded: @opentelemetry/api is installed but no SDK MeterProvider was registered when the module started (register it before NestFactory.create)'
        : 'metrics: not recorded: @opentelemetry/api is not installed (an optional peer; install it and an SDK to record)',

  // ---- Stuck leader work (stuckAfterMs, resignWhenStuck) -------------------------------------
  stuckAfterRange: (value: unknown, max: number) =>
    `stuckAfterMs must be a whole number of milliseconds from 1 to ${max}, or undefined to turn detection off (got ${String(value)})`,
  resignWhenStuckNeedsStuckAfter:
    'resignWhenStuck: true needs stuckAfterMs: how long leader work may run before it counts as stuck',
  stuckWork: (election: string, handler: string, runningMs: number, stuckAfterMs: number) =>
    `leader election "${election}": ${handler} has been running for ${Math.round(runningMs)} ms, longer than stuckAfterMs (${stuckAfterMs} ms)`,
  unhealthyStuck: (handler: string, runningMs: number, stuckAfterMs: number) =>
    `stuck: ${handler} has been running for ${Math.round(runningMs)} ms (stuckAfterMs ${stuckAfterMs})`,
  onElectedOptions: (target: string, detail: string) => `@OnElected() on ${target}: ${detail}`,
  stuckAfterOption: (value: unknown, max: number) =>
    `stuckAfterMs must be a whole number of milliseconds from 1 to ${max}, or false for work that runs all term and is never stuck (got ${typeof value === 'string' ? JSON.stringify(value) : String(value)})`,
  runHandlerName: (method: string, name: string) =>
    `${method}(name, fn): name must be a non-empty string (the handler label of metrics and stuck-work reports) followed by the function to run (got ${JSON.stringify(name)})`,
  resigningStuck: (election: string, handler: string) =>
    `leader election "${election}": resigning because ${handler} is stuck (resignWhenStuck); its signal is aborted so another replica takes over`,
  resigningStuckAgain: (election: string, handler: string, term: number) =>
    `leader election "${election}": won term ${term} while ${handler} is still stuck; resigning again (resignWhenStuck: at most once per term)`,
  // ---- Health: a lease held without acting (lib/leadership/election.handle.ts `notActing`) ------------------
  unhealthyNotActing: (term: number | undefined, why: string) =>
    `holds the lease${term === undefined ? '' : ` (term ${term})`} but does not act as leader: ${why}`,
  notActingOverdue: (what: string, forMs: number, boundMs: number) =>
    `${what} has lasted ${Math.round(forMs)} ms, longer than its bound (${boundMs} ms)`,
  notActingUnexplained: 'no handover drain, resignation or shutdown is under way for this term',
  notActingShutdown: 'the shutdown drain',
  notActingHandover: 'the handover drain',
  notActingResign: 'the resignation',

  // ---- Leader state, store side (issue 16: lib/stores/**) ---------------------------------------
  state: {
    unsupported: (store: string) =>
      `${store} does not support leader state (it implements no writeState/readState); use a built-in store or add both methods to it`,
    invalidKey: (value: unknown) =>
      `leader state key must be 1-200 characters of [A-Za-z0-9._:-] (got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 210)) : String(value)})`,
    tooLarge: (store: string, bytes: number, limit: number) =>
      `${store}: the leader state value is ${bytes} bytes of JSON, more than limits.maxStateBytes (${limit} bytes)`,
    notSerialisable: (store: string, what: string) =>
      `${store}: the leader state value is not JSON-serialisable (${what})`,
    corrupt: (store: string, election: string, key: string) =>
      `${store}: the stored leader state "${key}" of election "${election}" is not valid JSON written by this library; overwrite it with writeState`,
    columnMissing: (store: string, table: string, migration: string) =>
      `${store}: table ${table} has no state column (it was created by a version before leader state) and createTable is false: run the SQL of ${migration} once, or pass createTable: true to let the store add it`,
    reservedKey: (key: string) =>
      `leader state key ${JSON.stringify(key)} is reserved: keys starting with "tick:" hold the library's once-per-tick records (@LeaderOnly({ once: 'per-tick' })); use another key`,
    lost: (election: string, term: number) =>
      `the lease of election "${election}" (term ${term}) is no longer ours: the store refused the leader state write and left the state unchanged`,
  },

  // ---- Handover requests and lease meta, store side (issue 14: lib/stores/**) --------------------
  handover: {
    unsupported: (store: string) =>
      `${store} does not support handover requests (it implements no requestHandover/readHandover/clearHandover); use a built-in store`,
    invalidRequest: (store: string) =>
      `${store}: a handover request needs election, id, term (an integer), requestedBy, reason and requestedAt; to, when given, must be a non-empty identity`,
    requestTooLarge: (store: string, bytes: number, limit: number) =>
      `${store}: the handover request is ${bytes} bytes of JSON, more than ${limit}`,
    metaTooLarge: (store: string, bytes: number, limit: number) =>
      `${store}: the lease meta (advertise value and counters) is ${bytes} bytes of JSON, more than ${limit}`,
    badReleaseOption: (option: string, allowed: string, value: unknown) =>
      `release option ${option} must be ${allowed} (got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 60)) : String(value)})`,
    columnsMissing: (store: string, table: string, migration: string) =>
      `${store}: table ${table} has no handover columns (it was created by a version before handover requests) and createTable is false: run the SQL of ${migration} once, or pass createTable: true to let the store add them`,
    notStorable: (store: string, what: string, why: string) => `${store}: the ${what} cannot be stored (${why})`,
  },

  // ---- Leader state and once-per-tick cron runs (issue 16) ------------------------------------
  stateNotLeader: (election: string) =>
    `leader election "${election}": writeState() refused: this instance is not the leader (or its term has just ended), so it may not write leader state`,
  leaderOnlyOptions: (target: string, detail: string) => `@LeaderOnly() on ${target}: ${detail}`,
  perTickWithoutCron: (target: string) =>
    `@LeaderOnly({ once: 'per-tick' }) on ${target}: the method has no @Cron() schedule (from @nestjs/schedule); once per tick works on cron jobs only`,
  perTickNeedsState: (target: string, store: string) =>
    `@LeaderOnly({ once: 'per-tick' }) on ${target}: ${store} does not support leader state, which once-per-tick runs are recorded in; use a built-in store`,
  tickSkippedRecorded: (job: string, fireTime: string) => `skipped ${job} tick ${fireTime}: already run by a leader`,
  tickRecordFailed: (job: string, fireTime: string, reason: string) =>
    `skipped ${job} tick ${fireTime}: could not record the run before starting it (${reason})`,
  tickRecordRetry: (job: string, fireTime: string, reason: string) =>
    `${job} tick ${fireTime}: recording the run failed (${reason}); retrying within the tick`,
  tickRecordedAhead: (job: string, recorded: string, now: string, aheadMs: number) =>
    `${job}: the last run recorded is the tick of ${recorded}, ${Math.round(aheadMs)} ms ahead of this replica's clock (${now}): a leader with a clock running ahead recorded it, and this job's ticks are skipped until this clock passes it. Synchronise the hosts' clocks (NTP)`,
  tickCatchUp: (job: string, fireTime: string) =>
    `${job}: catching up tick ${fireTime}, which no leader ran (missed: 'catch-up')`,
  leaderOnlyBadValue: (option: string, value: unknown, expected: string) =>
    `${option} must be ${expected} (got ${typeof value === 'string' ? JSON.stringify(value) : String(value)})`,
  leaderOnlyMissedWithoutOnce: "missed applies to once: 'per-tick' only; add once: 'per-tick' or remove missed",
  perTickNeedsExpression: (target: string) =>
    `@LeaderOnly({ once: 'per-tick' }) on ${target}: the @Cron() time is not a cron expression string (a one-off Date has no ticks to count)`,
  perTickNoCronPackage: (target: string, reason: string) =>
    `@LeaderOnly({ once: 'per-tick' }) on ${target}: could not load the "cron" package (a dependency of @nestjs/schedule) to compute fire times: ${reason}`,
  tickCatchUpFailed: (job: string, reason: string) => `${job}: catch-up after election failed: ${reason}`,
  // Issue 24, defect 4: a job's record is found by its key alone.
  tickJobOwner: (label: string, provider: string, module: string | undefined) =>
    module ? `${label} (provider ${provider} in ${module})` : `${label} (${provider})`,
  tickJobKeyClash: (key: string, election: string, first: string, second: string) =>
    `@LeaderOnly({ once: 'per-tick' }): ${second} and ${first} would both record their runs under the key "${key}" of election "${election}" and take each other's ticks. The key is the @Cron() name, else Class.method: give one of them its own schedule name, e.g. @Cron(expression, { name: 'reports.run' })`,
  ticksLost: (job: string, count: number, first: string, last: string, moreSinceLastWarning: number) =>
    `${job}: ${count === 1 ? `the tick of ${first} ran` : `${count} ticks (${first} to ${last}) ran`} on no replica${moreSinceLastWarning > 0 ? ` (and ${moreSinceLastWarning} more since the last warning)` : ''}: a run that starts less than min(500 ms, ¼ period) before the next fire time counts as that next tick; a failover, a paused or overloaded process or an unreachable store lose ticks too`,
} as const;

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** The parts of an Azure failure safe to quote: HTTP status, x-ms-error-code, x-ms-request-id. */
export interface AzureFailure {
  status?: number;
  code?: string;
  requestId?: string;
}

/** `403 AuthorizationPermissionMismatch, request id …` (or `no response ECONNREFUSED`). */
function describeAzureFailure({ status, code, requestId }: AzureFailure): string {
  const parts = [[status ?? 'no response', code].filter(Boolean).join(' ')];
  if (requestId) parts.push(`request id ${requestId}`);
  return parts.join(', ');
}
