import type { LeaseStore } from '../stores/lease-store.js';
import { cliMessages } from './cli.messages.js';
import { CliError, ExitCode } from './cli-errors.js';

export const STORE_KINDS = ['azure', 'postgres', 'mysql', 'redis', 'etcd'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/** The environment variables the CLI reads (their values are never printed). */
export const ENV = { store: 'LEADER_ELECTION_STORE', connection: 'LEADER_ELECTION_CONNECTION' } as const;

/** The namespace options, each mirroring a store's constructor option. */
export interface NamespaceOptions {
  container?: string;
  table?: string;
  schema?: string;
  prefix?: string;
}

export interface StoreConfig extends NamespaceOptions {
  kind: StoreKind;
  /** Connection string, URL or endpoints, as the chosen store's `connection` option takes it. */
  connection: string;
}

/** Which stores take which namespace option: anything else is a usage error, not silently ignored. */
const APPLIES_TO: Record<keyof NamespaceOptions, readonly StoreKind[]> = {
  container: ['azure'],
  table: ['postgres', 'mysql'],
  schema: ['postgres'],
  prefix: ['azure', 'redis', 'etcd'],
};

/** The driver package each store's subpath needs (an optional peer of this package). */
const DRIVER: Record<StoreKind, string> = {
  azure: '@azure/storage-blob',
  postgres: 'pg',
  mysql: 'mysql2',
  redis: 'ioredis',
  etcd: 'etcd3',
};

/** Throws a usage error for a namespace option the chosen store does not take. */
export function checkNamespaceOptions(kind: StoreKind, options: NamespaceOptions): void {
  for (const [option, kinds] of Object.entries(APPLIES_TO) as Array<[keyof NamespaceOptions, readonly StoreKind[]]>) {
    if (options[option] !== undefined && !kinds.includes(kind)) {
      throw new CliError(ExitCode.usage, cliMessages.optionNotForStore(`--${option}`, kind, kinds));
    }
  }
}

/**
 * The store `config` names, built through the package's public entry of that store (the root for
 * Azure, the `/postgres`, `/mysql`, `/redis`, `/etcd` subpaths), imported only now so a driver
 * the operator does not use is never loaded. SQL tables are never created: an operator's tool must
 * not change the schema, and a read-only role (enough for `status`) could not.
 */
export async function buildStore(config: StoreConfig, connectionSource: string): Promise<LeaseStore> {
  try {
    return await construct(config);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new CliError(ExitCode.unexpected, cliMessages.driverMissing(config.kind, DRIVER[config.kind]));
    }
    // Constructors validate their options and say why without quoting the value (see store-support).
    if (error instanceof TypeError || error instanceof RangeError) {
      throw new CliError(ExitCode.usage, cliMessages.storeOptionsRefused(config.kind, connectionSource, error.message));
    }
    throw error;
  }
}

async function construct(config: StoreConfig): Promise<LeaseStore> {
  const { connection, container, table, schema, prefix } = config;
  switch (config.kind) {
    case 'azure': {
      const { AzureBlobLeaseStore } = await import('../index.js');
      // A URL (with a SAS in its query) or a connection string; either way the store parses it.
      const target = /^https?:\/\//i.test(connection) ? { url: connection } : { connectionString: connection };
      return new AzureBlobLeaseStore({ ...target, container, blobPrefix: prefix });
    }
    case 'postgres': {
      const { PostgresLeaseStore } = await import('../postgres.js');
      return new PostgresLeaseStore({ connection, table, schema, createTable: false });
    }
    case 'mysql': {
      const { MySqlLeaseStore } = await import('../mysql.js');
      return new MySqlLeaseStore({ connection, table, createTable: false });
    }
    case 'redis': {
      const { RedisLeaseStore } = await import('../redis.js');
      return new RedisLeaseStore({ connection, keyPrefix: prefix });
    }
    case 'etcd': {
      const { EtcdLeaseStore } = await import('../etcd.js');
      return new EtcdLeaseStore({ connection: etcdConnection(connection), keyPrefix: prefix });
    }
  }
}

/**
 * Comma-separated endpoints; `http://user:password@host:2379` carries etcd's user and password,
 * which the etcd3 client takes as an option (the store itself refuses credentials in a URL).
 */
function etcdConnection(connection: string): string | string[] | { hosts: string[]; auth: EtcdAuth } {
  let auth: EtcdAuth | undefined;
  const hosts = connection
    .split(',')
    .map((endpoint) => endpoint.trim())
    .map((endpoint) => {
      const credentials = /^(https?:\/\/)([^\s/@]+)@(.+)$/.exec(endpoint);
      if (!credentials) return endpoint;
      const [username, password = ''] = credentials[2].split(':');
      auth = { username: decodeURIComponent(username), password: decodeURIComponent(password) };
      return `${credentials[1]}${credentials[3]}`;
    });
  if (auth) return { hosts, auth };
  return hosts.length === 1 ? hosts[0] : hosts;
}

interface EtcdAuth {
  username: string;
  password: string;
}
