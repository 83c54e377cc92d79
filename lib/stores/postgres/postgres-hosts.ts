// Several hosts in one connection string, as libpq takes them (a primary and its standbys, e.g.
// under Patroni or a managed multi-AZ server): `pg` connects to one host only, so the store picks
// the host itself. Each new connection goes to the host that last answered as wanted; one that is
// unreachable or of the wrong role moves the choice to the next host, and the store's statement is
// tried again there at once (nothing was sent yet, so nothing can have been applied twice).
import pg, { type Client, type ClientConfig, type PoolConfig } from 'pg';
import { postgresMessages } from './postgres.messages.js';

/** libpq's `target_session_attrs` values that a lease store can use. */
export const TARGET_SESSION_ATTRS = ['any', 'read-write', 'primary'] as const;
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];

/** The hosts of a multi-host connection string, and the role each connection must find. */
export interface HostList {
  /** One single-host connection string per host, in the given order. */
  urls: string[];
  /** What a connection must find before the store uses it. */
  target: TargetSessionAttrs;
}

/** `postgres://` or `postgresql://`, credentials, the host list, then path and query. */
const MULTI_HOST = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)([/?#].*)?$/i;

/**
 * The hosts of `url` when it names several (`h1:5432,h2:5433`) or a `target_session_attrs`;
 * undefined for a plain single-host URL (used as it is). Throws naming `option` on an empty host or
 * an unknown `target_session_attrs`; the message never quotes the URL.
 */
export function parseHostList(url: string, option: string): HostList | undefined {
  const match = MULTI_HOST.exec(url);
  if (!match) return undefined;
  const [, protocol, credentials = '', hostPart, rest = ''] = match;
  const [path, query = ''] = splitOnce(rest, '?');
  const params = new URLSearchParams(query);
  const attrs = params.get('target_session_attrs');
  const hosts = hostPart.split(',');
  if (hosts.length === 1 && attrs === null) return undefined;
  if (attrs !== null && !(TARGET_SESSION_ATTRS as readonly string[]).includes(attrs)) {
    throw new TypeError(postgresMessages.targetSessionAttrs(option, TARGET_SESSION_ATTRS));
  }
  params.delete('target_session_attrs');
  const tail = `${path}${params.size > 0 ? `?${params}` : ''}`;
  return {
    urls: hosts.map((host) => {
      if (host.trim() === '') throw new TypeError(postgresMessages.emptyHost(option));
      return `${protocol}${credentials}${host.trim()}${tail}`;
    }),
    target: (attrs ?? 'any') as TargetSessionAttrs,
  };
}

function splitOnce(text: string, separator: string): [string, string?] {
  const at = text.indexOf(separator);
  return at < 0 ? [text] : [text.slice(0, at), text.slice(at + 1)];
}

/** Connect errors (unreachable, wrong role) of a host list: the statement was never sent. */
const beforeSending = new WeakSet<object>();

/** Whether `error` came from connecting to one host of a list, before any statement was sent. */
export function failedBeforeSending(error: unknown): boolean {
  return typeof error === 'object' && error !== null && beforeSending.has(error);
}

/** The {@link HostChoice} of each Client class it made. */
const hostCounts = new WeakMap<object, HostChoice>();

/** How many hosts a statement may try with pool settings `config`: 1 unless they name a host list. */
export function hostAttempts(config: PoolConfig | undefined): number {
  return (config?.Client && hostCounts.get(config.Client)?.size) || 1;
}

/** The host list behind pool settings `config`, if they name one. */
export function hostChoiceOf(config: PoolConfig | undefined): HostChoice | undefined {
  return config?.Client ? hostCounts.get(config.Client) : undefined;
}

/** The role check of a new connection: one round trip, only when a role is asked for. */
const ROLE_CHECK = "SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS read_only";

/**
 * The `Client` class the store's pool (and its LISTEN connection) uses for a host list: each
 * instance connects to the host chosen at its construction, checks the role, and on failure moves
 * the choice on. `hosts.size` is how many hosts a statement may try.
 */
export class HostChoice {
  private index = 0;
  private settings: PoolConfig = {};
  private made?: typeof Client;

  constructor(
    readonly list: HostList,
    private readonly base: typeof Client = pg.Client,
  ) {}

  get size(): number {
    return this.list.urls.length;
  }

  /** The pool settings with our Client class in place of the user's (theirs is the base). */
  poolConfig(config: PoolConfig): PoolConfig {
    const { connectionString: _, ...rest } = config;
    this.settings = rest;
    return { ...rest, Client: this.clientClass() };
  }

  private clientClass(): typeof Client {
    this.made ??= this.makeClientClass();
    return this.made;
  }

  private makeClientClass(): typeof Client {
    const choice = this;
    const Base = this.base;
    class HostListClient extends Base {
      private readonly hostIndex: number;

      constructor(config?: string | ClientConfig) {
        const index = choice.index;
        const own = typeof config === 'string' ? {} : (config ?? {});
        super({ ...own, connectionString: choice.list.urls[index] });
        this.hostIndex = index;
      }

      // pg-pool calls connect(callback), the listener connect(): both forms.
      override connect(): Promise<Client>;
      override connect(callback: (error: Error | null, client?: Client) => void): void;
      override connect(callback?: (error: Error | null, client?: Client) => void): Promise<Client> | undefined {
        const connected = this.connectChecked().then(() => this as unknown as Client);
        if (!callback) return connected;
        connected.then(
          (client) => callback(null, client),
          (error: Error) => callback(error),
        );
        return undefined;
      }

      private async connectChecked(): Promise<void> {
        try {
          await super.connect();
          if (choice.list.target !== 'any') {
            const { rows } = await this.query<{ recovery: boolean; read_only: string }>(ROLE_CHECK);
            const [row] = rows;
            const wrong = choice.list.target === 'primary' ? row?.recovery !== false : row?.read_only !== 'off';
            if (wrong) throw notWanted(choice.list.target);
          }
        } catch (error) {
          choice.moveOn(this.hostIndex);
          if (typeof error === 'object' && error !== null) beforeSending.add(error);
          // A connected client of the wrong role is ours to close (pg-pool drops the failed one).
          this.on('error', () => undefined);
          void this.end().catch(() => undefined);
          throw error;
        }
      }
    }
    hostCounts.set(HostListClient, this);
    return HostListClient as unknown as typeof Client;
  }

  /**
   * Points the choice at a host that answers in the wanted role now, trying each once from the
   * current one on (a connection of its own per try, closed again); throws the last failure when
   * none does. For the LISTEN connection, which redials with a growing backoff: each redial should
   * find the new primary, not try one host per backoff step.
   */
  async find(): Promise<void> {
    const Probe = this.clientClass();
    let lastError: unknown;
    for (let tried = 0; tried < this.size; tried++) {
      const probe = new Probe(this.settings);
      try {
        await probe.connect();
        await probe.end().catch(() => undefined);
        return;
      } catch (error) {
        // connect() moved the choice on to the next host.
        lastError = error;
      }
    }
    throw lastError;
  }

  /** The host at `failed` did not do: the next connection tries the one after it. */
  private moveOn(failed: number): void {
    if (this.index === failed) this.index = (failed + 1) % this.list.urls.length;
  }
}

/** A host that answered, but not in the role asked for (a standby, or read-only): SQLSTATE 25006. */
function notWanted(target: TargetSessionAttrs): Error {
  return Object.assign(new Error(postgresMessages.wrongRole(target)), { code: '25006' });
}
