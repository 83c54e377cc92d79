import { FatalLeaseStoreError, LeaseLostError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import type {
  AcquireRequest,
  AcquireResult,
  CallOptions,
  Lease,
  LeaseInfo,
  LeaseStore,
  LeaseWatch,
  RenewOptions,
} from '../../lib/stores/lease-store.js';

export type Fault =
  | 'pass'
  | 'transient'
  | 'fatal'
  /** The store answers that the lease is not ours (broken, taken over). */
  | 'lost'
  /** Never answers until the call's signal aborts (a well-behaved store over a dead network). */
  | 'hang'
  /** Ignores the signal; the call completes (successfully, against the real store) only on `releaseHeld()`. */
  | 'hang-then-succeed';

type Operation = 'acquire' | 'renew' | 'release' | 'read';

/**
 * Wraps a real store and injects faults per operation, the way an outage looks to the elector.
 * Not a driver mock: everything that passes goes to the wrapped store.
 */
export class FaultInjectingStore implements LeaseStore {
  readonly name: string;
  readonly limits;
  readonly calls: Record<Operation, number> = { acquire: 0, renew: 0, release: 0, read: 0 };
  private readonly faults: Partial<Record<Operation, Fault>> = {};
  private held: Array<() => void> = [];

  constructor(private readonly inner: LeaseStore) {
    this.name = inner.name;
    this.limits = inner.limits;
  }

  set(fault: Fault, ...operations: Operation[]): this {
    for (const op of operations.length ? operations : (['acquire', 'renew', 'release', 'read'] as const)) {
      this.faults[op] = fault;
    }
    return this;
  }

  /** Let every 'hang-then-succeed' call proceed to the real store. */
  releaseHeld(): void {
    const held = this.held;
    this.held = [];
    for (const resume of held) resume();
  }

  acquire(request: AcquireRequest): Promise<AcquireResult> {
    return this.run('acquire', request.signal, (signal) => this.inner.acquire({ ...request, signal }));
  }

  renew(lease: Lease, options: RenewOptions): Promise<void> {
    return this.run('renew', options.signal, (signal) => this.inner.renew(lease, { ...options, signal }));
  }

  release(lease: Lease, options: CallOptions): Promise<void> {
    return this.run('release', options.signal, (signal) => this.inner.release(lease, { signal }));
  }

  read(election: string, options: CallOptions): Promise<LeaseInfo> {
    return this.run('read', options.signal, (signal) => this.inner.read(election, { signal }));
  }

  get watch(): LeaseStore['watch'] {
    return this.inner.watch
      ? (election: string, cb: () => void): LeaseWatch => this.inner.watch!(election, cb)
      : undefined;
  }

  close(): Promise<void> {
    return this.inner.close?.() ?? Promise.resolve();
  }

  private async run<T>(op: Operation, signal: AbortSignal, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    this.calls[op] += 1;
    switch (this.faults[op] ?? 'pass') {
      case 'pass':
        return call(signal);
      case 'transient':
        throw new TransientLeaseStoreError(`injected transient failure of ${op}`);
      case 'fatal':
        throw new FatalLeaseStoreError(`injected fatal failure of ${op}`);
      case 'lost':
        throw new LeaseLostError(`injected: lease no longer ours (${op})`);
      case 'hang':
        return new Promise<T>((_, reject) => {
          const onAbort = () => reject(new TransientLeaseStoreError(`${op} aborted`, { cause: signal.reason }));
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        });
      case 'hang-then-succeed':
        // The caller has given up on this call long ago; the store still carries it out.
        await new Promise<void>((resume) => this.held.push(resume));
        return call(new AbortController().signal);
    }
  }
}
