// Where the machine's database servers are, and names that keep test runs apart. The servers
// themselves are started by scripts/ensure-services.sh (etcd by the Jest global setup).
import { randomBytes } from 'node:crypto';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { TransientLeaseStoreError } from '../../lib/shared/errors.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { freePort } from '../../scripts/lib/ports.mjs';
import { TcpForwarder } from '../support/tcp-forwarder.js';

export const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The etcd the global setup started (see test/setup/etcd.ts). */
export function etcdEndpoint(): string {
  const endpoint = process.env.ETCD_ENDPOINT;
  if (!endpoint)
    throw new Error('ETCD_ENDPOINT is not set: run the tests through `npm test` (its global setup starts etcd)');
  return endpoint;
}

/**
 * A name no other test file, worker or earlier run uses: lowercase letters, digits and '_',
 * starting with a letter, at most 40 characters (fits SQL identifiers and key prefixes).
 */
export function uniqueName(prefix: string): string {
  if (!/^[a-z][a-z0-9_]{0,19}$/.test(prefix)) throw new Error(`uniqueName: bad prefix ${JSON.stringify(prefix)}`);
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

// A loopback port nobody listens on right now (also: an "unreachable server" for tests).
export { freePort };

/** A TCP server that accepts connections and never answers: a dead server or network path. */
export async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A TCP forwarder to a real server that can hold what clients send: requests written while it is
 * held reach the server only on `open()`, after the client may have given up on them.
 */
export class TcpGate extends TcpForwarder {
  private held = false;
  private readonly queued: Array<() => void> = [];

  static start(targetPort: number): Promise<TcpGate> {
    return TcpForwarder.listening(new TcpGate(targetPort));
  }

  hold(): void {
    this.held = true;
  }

  open(): void {
    this.held = false;
    for (const flush of this.queued.splice(0)) flush();
  }

  override async close(): Promise<void> {
    this.open();
    await super.close();
  }

  protected forward(client: Socket, upstream: Socket): void {
    client.on('data', (chunk) => {
      if (!this.held) upstream.write(chunk);
      else this.queued.push(() => upstream.write(chunk));
    });
    upstream.on('data', (chunk) => client.write(chunk));
  }
}

/**
 * A store pointed at a closed port, then at a server that accepts but never answers, must fail
 * with a TransientLeaseStoreError as soon as a short signal aborts (no driver-level retry storm).
 */
export async function expectUnreachableIsTransient(storeAt: (port: number) => LeaseStore): Promise<void> {
  const silent = await silentServer();
  try {
    for (const port of [await freePort(), silent.port]) {
      const startedAt = performance.now();
      const error = await storeAt(port)
        .read('e', { signal: AbortSignal.timeout(300) })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TransientLeaseStoreError);
      expect(performance.now() - startedAt).toBeLessThan(2_000);
    }
  } finally {
    await silent.close();
  }
}

/** Drops the test's PostgreSQL tables (unique per run, see {@link uniqueName}); pg loaded only here. */
export async function dropPostgresTables(...tables: string[]): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    for (const table of tables) await client.query(`DROP TABLE IF EXISTS "${table}"`);
  } finally {
    await client.end();
  }
}
