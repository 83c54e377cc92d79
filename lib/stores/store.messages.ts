/**
 * The texts the stores share (lease, options, leader state, handover requests); each backend's own texts
 * live in its folder. None may include a connection string, account key or SAS: they are built from
 * option names, codes and class names only, never from a driver's own message (it may quote the connection).
 */
export const storeMessages = {
  // Store outcomes.
  leaseLost: (election: string) => `the lease of election "${election}" is no longer ours`,
  // PostgreSQL / MySQL / Redis / etcd stores (issue 6).
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
  // Store options (issues 10/11/13): never quote the rejected value, a connection string may carry a password.
  storeOptions: {
    connectionInvalid: (store: string, option: string, expected: string) =>
      `${store}: ${option} is not a valid connection string (expected ${expected}); check the configuration or the environment variable it comes from`,
  },
  // Leader state, store side (issue 16).
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
    lost: (election: string, term: number) =>
      `the lease of election "${election}" (term ${term}) is no longer ours: the store refused the leader state write and left the state unchanged`,
  },
  // Shared records (readRecord/writeRecord): operators' commands any replica may write (issue 28).
  records: {
    unsupported: (store: string) =>
      `${store} does not support shared records (it implements no readRecord/writeRecord); use a built-in store or add both methods to it`,
    invalidKey: (value: unknown) =>
      `shared record key must be 1-200 characters of [A-Za-z0-9._:-] (got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 210)) : String(value)})`,
    invalidVersion: (value: unknown) =>
      `shared record ifVersion must be a version string read with readRecord, or null for "only if absent" (got ${typeof value})`,
    tooLarge: (store: string, bytes: number, limit: number) =>
      `${store}: the shared record value is ${bytes} bytes of JSON, more than MAX_SHARED_RECORD_BYTES (${limit} bytes)`,
    notSerialisable: (store: string, what: string) =>
      `${store}: the shared record value is not JSON-serialisable (${what})`,
    corrupt: (store: string, election: string, key: string) =>
      `${store}: the shared record "${key}" of election "${election}" is not valid JSON written by this library`,
    columnMissing: (store: string, table: string, migration: string) =>
      `${store}: table ${table} has no records column (it was created by a version before shared records) and createTable is false: run the SQL of ${migration} once, or pass createTable: true to let the store add it`,
  },
  // The folded renewal (renewWith, issue 29).
  renewWith: {
    duplicateKey: (what: string, key: string) =>
      `renewWith: ${what} key "${key}" appears twice; each key at most once per renewal`,
    notOffered: (store: string, option: string, capability: string) =>
      `${store}: renewWith option ${option} needs the ${capability} capability, which this store does not offer`,
  },
  // Handover requests and lease meta, store side (issue 14).
  handover: {
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
} as const;
