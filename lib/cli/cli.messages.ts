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

  // --help.
  exitCodes: `Exit codes:
  0  ok
  1  unexpected error
  2  usage error (a bad or missing option)
  3  the store is unreachable or refused the request
  4  no leader to hand over from
  5  handover --wait timed out
  6  the store lacks the capability (requestHandover / readHandover / listElections)`,
  environment: (store: string, connection: string) => `Environment:
  ${store}       the store, when --store is not given
  ${connection}  the connection (URL, connection string or endpoints); prefer it to
                              --connection, which other users of the machine can see in the process list`,
} as const;
