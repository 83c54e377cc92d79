// The stores the benchmarks run against, built from environment variables, and a wrapper that
// counts calls at the LeaseStore boundary (what the elector asks of the backend).
//
//   STORE=azure|postgres|mysql|redis|etcd
//   AZURE_CONNECTION_STRING (Azurite's, set by bench/run.mjs), PG_URL, MYSQL_URL, REDIS_URL, ETCD_ENDPOINT
//
// Bench data stays apart from the tests': its own table (`bench_leases`), key prefixes and container.
import type {
  AcquireRequest,
  AcquireResult,
  CallOptions,
  Lease,
  LeaseInfo,
  LeaseStore,
  LeaseStoreLimits,
  LeaseWatch,
  ReleaseOptions,
  RenewOptions,
} from '../../lib/stores/lease-store.js';

export type StoreKind = 'azure' | 'postgres' | 'mysql' | 'redis' | 'etcd';
export const STORE_KINDS: readonly StoreKind[] = ['azure', 'postgres', 'mysql', 'redis', 'etcd'];

const need = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

/** A new store of `kind`; the subpath modules are imported lazily, as a user's app would. */
export async function makeStore(kind: string): Promise<LeaseStore> {
  switch (kind) {
    case 'azure': {
      const { AzureBlobLeaseStore } = await import('../../lib/stores/azure/azure-blob.store.js');
      return new AzureBlobLeaseStore({ connectionString: need('AZURE_CONNECTION_STRING'), container: 'bench' });
    }
    case 'postgres': {
      const { PostgresLeaseStore } = await import('../../lib/postgres.js');
      const max = process.env.PG_POOL_MAX ? Number(process.env.PG_POOL_MAX) : undefined;
      return new PostgresLeaseStore({
        connection: max ? { connectionString: need('PG_URL'), max } : need('PG_URL'),
        table: 'bench_leases',
      });
    }
    case 'mysql': {
      const { MySqlLeaseStore } = await import('../../lib/mysql.js');
      return new MySqlLeaseStore({ connection: need('MYSQL_URL'), table: 'bench_leases' });
    }
    case 'redis': {
      const { RedisLeaseStore } = await import('../../lib/redis.js');
      return new RedisLeaseStore({ connection: need('REDIS_URL'), keyPrefix: 'bench:' });
    }
    case 'etcd': {
      const { EtcdLeaseStore } = await import('../../lib/etcd.js');
      return new EtcdLeaseStore({ connection: need('ETCD_ENDPOINT'), keyPrefix: 'bench/' });
    }
    default:
      throw new Error(`unknown STORE ${JSON.stringify(kind)} (one of ${STORE_KINDS.join(', ')})`);
  }
}

export interface StoreCounts {
  acquire: number;
  renew: number;
  release: number;
  read: number;
  watch: number;
  /** Only with `{ handover: true }`. */
  requestHandover?: number;
  readHandover?: number;
  clearHandover?: number;
  listElections?: number;
}

type HandoverMethods = Required<
  Pick<LeaseStore, 'requestHandover' | 'readHandover' | 'clearHandover' | 'listElections'>
>;

/**
 * Delegates every call to `inner` and counts it. `watch` exists only when the inner store has it
 * (the elector checks for it). `firstAcquireAt` is the epoch ms of the first acquire sent: when
 * the elector started contending.
 *
 * The handover capability (requests, `listElections`) is passed through only with
 * `{ handover: true }`: without it the elector sees a store that lacks it (a third-party store, the
 * previous version's cost), which is what figures 3–9 measure; figures 10–13 turn it on.
 */
export class CountingStore implements LeaseStore {
  readonly counts: StoreCounts = { acquire: 0, renew: 0, release: 0, read: 0, watch: 0 };
  firstAcquireAt?: number;
  readonly watch?: (election: string, onMayBeFree: () => void) => LeaseWatch;
  readonly requestHandover?: HandoverMethods['requestHandover'];
  readonly readHandover?: HandoverMethods['readHandover'];
  readonly clearHandover?: HandoverMethods['clearHandover'];
  readonly listElections?: HandoverMethods['listElections'];

  constructor(
    readonly inner: LeaseStore,
    { handover = false }: { handover?: boolean } = {},
  ) {
    const watch = inner.watch?.bind(inner);
    if (watch) {
      this.watch = (election, onMayBeFree) => {
        this.counts.watch += 1;
        return watch(election, onMayBeFree);
      };
    }
    const { requestHandover, readHandover, clearHandover, listElections } = inner;
    if (handover && requestHandover && readHandover && clearHandover && listElections) {
      const counted = <A extends unknown[], R>(name: keyof HandoverMethods, call: (...args: A) => Promise<R>) => {
        this.counts[name] = 0;
        return (...args: A): Promise<R> => {
          this.counts[name] = (this.counts[name] ?? 0) + 1;
          return call.apply(inner, args);
        };
      };
      this.requestHandover = counted('requestHandover', requestHandover);
      this.readHandover = counted('readHandover', readHandover);
      this.clearHandover = counted('clearHandover', clearHandover);
      this.listElections = counted('listElections', listElections);
    }
  }

  get name(): string {
    return this.inner.name;
  }

  get limits(): LeaseStoreLimits {
    return this.inner.limits;
  }

  /** Every call made (watch subscriptions are not calls). */
  get total(): number {
    const { watch, ...calls } = this.counts;
    return Object.values(calls).reduce((sum: number, count) => sum + (count ?? 0), 0);
  }

  acquire(request: AcquireRequest): Promise<AcquireResult> {
    this.counts.acquire += 1;
    this.firstAcquireAt ??= Date.now();
    return this.inner.acquire(request);
  }

  renew(lease: Lease, options: RenewOptions): Promise<void> {
    this.counts.renew += 1;
    return this.inner.renew(lease, options);
  }

  release(lease: Lease, options: ReleaseOptions): Promise<void> {
    this.counts.release += 1;
    return this.inner.release(lease, options);
  }

  read(election: string, options: CallOptions): Promise<LeaseInfo> {
    this.counts.read += 1;
    return this.inner.read(election, options);
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }
}

/** One `@@b {json}` line on stdout: the only lines bench/run.mjs reads from its children. */
export function emit(id: string, event: Record<string, unknown>): void {
  process.stdout.write(`@@b ${JSON.stringify({ ...event, id, at: Date.now() })}\n`);
}

export const numberEnv = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new Error(`${name} must be a number, got ${JSON.stringify(raw)}`);
  return value;
};

/** The elector timings given as LEASE_MS, RENEW_DEADLINE_MS, RENEW_MS, RETRY_MS (unset: the library's default). */
export function timingsFromEnv() {
  const timing = (name: string): number | undefined =>
    process.env[name] === undefined ? undefined : numberEnv(name, 0);
  return {
    leaseDurationMs: timing('LEASE_MS'),
    renewDeadlineMs: timing('RENEW_DEADLINE_MS'),
    renewIntervalMs: timing('RENEW_MS'),
    retryIntervalMs: timing('RETRY_MS'),
  };
}
