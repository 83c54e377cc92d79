import { throwIfAborted, untilAborted } from '../../lib/shared/abort.js';
import type { Clock } from '../../lib/shared/clock.js';
import { LeaseLostError, TransientLeaseStoreError, toLeaseStoreError } from '../../lib/shared/errors.js';
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
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { StoreCallKit } from '../../lib/stores/store-support.js';
import type { NodeClock, World } from './world.js';

/** What the network does to calls while faults are on (probabilities per call). */
export interface NetworkFaults {
  /** Normal one-way latency is uniform in [0, latencyMs]. */
  latencyMs: number;
  /** Request never reaches the server; the client sees a transient error. */
  error: number;
  /** Server applies the request, the answer is lost; the client sees a reset connection. */
  lostReply: number;
  /** The request reaches the server twice (a driver resend); the client sees one answer. */
  duplicate: number;
  /** Latency spike up to `slowMs` each way (longer than the call timeout: the caller gives up). */
  slow: number;
  slowMs: number;
  /** The client ignores the call's signal (a driver that cannot cancel) and answers late. */
  deaf: number;
  /** Push notifications (lease may be free) lost. */
  lostPush: number;
}

export type CallKind = 'acquire' | 'renew' | 'release' | 'read';

/** One request as its sender sent it: the independent record the checks trust. */
export interface SentCall {
  node: string;
  kind: CallKind;
  leaseId?: string;
  /** Sender's monotonic and wall clocks, and true time, at send. */
  local: number;
  wall: number;
  at: number;
  fault?: 'error' | 'lost' | 'duplicate' | 'slow' | 'blackhole';
  /** True time the answer (or the error) reached the sender. */
  repliedAt?: number;
  /** Sent through a store that ignores its signal and undoes nothing (see `deafAcquire`). */
  deaf?: boolean;
}

interface Shadow {
  holder?: string;
  leaseId?: string;
  term: number;
  expiresAt: number;
}

/**
 * The store's server side: an InMemoryLeaseStore on true time, behind lease ids the clients
 * propose (as Azure, Redis and SQL stores do), idempotent for a resend of the same id. A shadow
 * copy answers the checks synchronously and is itself cross-checked against the store.
 */
export class SimLeaseServer {
  readonly inner: InMemoryLeaseStore;
  private readonly byProposed = new Map<string, Lease>();
  private shadowSlot: Shadow = { term: 0, expiresAt: 0 };
  private readonly watchers = new Map<string, () => void>();
  readonly sent: SentCall[] = [];
  /** Acquires the server granted, by proposed id, with when they were sent. */
  readonly granted = new Map<string, SentCall>();
  readonly modelErrors: string[] = [];
  faultsOn = false;
  /** Nodes cut off from the store: their calls fail at once (`error`) or vanish (`blackhole`). */
  readonly partitioned = new Map<string, 'error' | 'blackhole'>();

  constructor(
    private readonly world: World,
    readonly election: string,
    readonly faults: NetworkFaults,
  ) {
    const trueClock: Clock = {
      now: () => world.now,
      wallNow: () => world.now,
      setTimeout: () => {
        throw new Error('the simulated server sets no timers');
      },
      clearTimeout: () => undefined,
    };
    this.inner = new InMemoryLeaseStore({ clock: trueClock });
    this.inner.watch(election, () => this.notifyWatchers());
  }

  /** The lease as the store holds it right now. */
  slot(): { held: boolean; holder?: string; leaseId?: string; term: number; expiresAt: number } {
    const s = this.shadowSlot;
    return { ...s, held: s.leaseId !== undefined && this.world.now < s.expiresAt };
  }

  async apply(kind: CallKind, payload: { identity?: string; leaseId?: string; leaseDurationMs?: number }) {
    const signal = new AbortController().signal;
    switch (kind) {
      case 'acquire': {
        const current = this.slot();
        const proposed = payload.leaseId as string;
        if (current.held && current.leaseId === proposed) {
          return this.toOuter(this.byProposed.get(proposed) as Lease, proposed);
        }
        const result = await this.inner.acquire({
          election: this.election,
          identity: payload.identity as string,
          leaseDurationMs: payload.leaseDurationMs as number,
          signal,
        });
        if (!result.acquired) return result;
        this.byProposed.set(proposed, result.lease);
        this.shadowSlot = {
          holder: result.lease.holder,
          leaseId: proposed,
          term: result.lease.term,
          expiresAt: this.world.now + (payload.leaseDurationMs as number),
        };
        await this.crossCheck();
        return this.toOuter(result.lease, proposed);
      }
      case 'renew': {
        const lease = this.byProposed.get(payload.leaseId as string);
        if (!lease) throw new LeaseLostError(`lease ${payload.leaseId} unknown`);
        await this.inner.renew(lease, { leaseDurationMs: payload.leaseDurationMs as number, signal });
        this.shadowSlot.expiresAt = this.world.now + (payload.leaseDurationMs as number);
        await this.crossCheck();
        return undefined;
      }
      case 'release': {
        const lease = this.byProposed.get(payload.leaseId as string);
        if (!lease) return undefined;
        await this.inner.release(lease, { signal });
        if (this.shadowSlot.leaseId === payload.leaseId) {
          this.shadowSlot = { term: this.shadowSlot.term, expiresAt: 0 };
        }
        await this.crossCheck();
        return undefined;
      }
      case 'read':
        return this.inner.read(this.election, { signal });
    }
  }

  /** A killed process: nothing is pushed to it any more. */
  forget(node: string): void {
    this.watchers.delete(node);
  }

  watch(node: string, listener: () => void): LeaseWatch {
    this.watchers.set(node, listener);
    return { close: async () => void this.watchers.delete(node) };
  }

  private notifyWatchers(): void {
    for (const [node, listener] of this.watchers) {
      if (this.faultsOn && this.world.rng.chance(this.faults.lostPush)) continue;
      this.world.schedule(this.world.now + this.world.rng.next() * this.faults.latencyMs, listener, node);
    }
  }

  private toOuter(lease: Lease, leaseId: string): AcquireResult {
    return { acquired: true, lease: { election: lease.election, holder: lease.holder, term: lease.term, leaseId } };
  }

  private async crossCheck(): Promise<void> {
    const info = await this.inner.read(this.election, { signal: new AbortController().signal });
    const mine = this.slot();
    if (info.held !== mine.held || info.term !== mine.term || (info.held && info.holder !== mine.holder)) {
      this.modelErrors.push(`store shadow ${JSON.stringify(mine)} disagrees with the store ${JSON.stringify(info)}`);
    }
  }
}

/**
 * One node's view of the store: every call crosses the simulated network (latency, errors, lost
 * answers after the server applied the write, duplicates, spikes) and honours its signal the way
 * the real stores do today (an abandoned acquire is released once its outcome is known).
 */
export class SimStoreClient implements LeaseStore {
  readonly name = 'SimLeaseStore';
  readonly limits;
  private calls = 0;
  private readonly storeCalls = new StoreCallKit({
    name: 'SimLeaseStore',
    classify: (error) => toLeaseStoreError(error),
    newLeaseId: () => `${this.node}:${++this.calls}`,
  });
  /** Set when `stop()` resolved: from then on the node must send nothing. */
  stoppedAt?: number;
  readonly afterStop: string[] = [];
  /** A successful acquire/renew whose answer the elector received (not abandoned). */
  onSuccess?: (call: SentCall) => void;
  onKnownAcquire?: (leaseId: string) => void;
  /** The server granted one of our acquires (its answer is still on the way): the riskiest instant to resign or stop. */
  onAcquireGranted?: () => void;

  constructor(
    private readonly world: World,
    private readonly server: SimLeaseServer,
    readonly node: string,
    private readonly clock: NodeClock,
  ) {
    this.limits = server.inner.limits;
  }

  acquire(request: AcquireRequest): Promise<AcquireResult> {
    if (this.deaf()) return this.deafAcquire(request);
    // The stores' one rule for acquires of unknown outcome (lib/stores/store-support.ts): anything
    // but a clear answer releases the attempt's own lease id, at once and after the call settled.
    let sent: SentCall | undefined;
    const answer = this.storeCalls.acquire(request, {
      attempt: (leaseId) => {
        const work = this.send<AcquireResult>('acquire', {
          identity: request.identity,
          leaseId,
          leaseDurationMs: request.leaseDurationMs,
        });
        sent = work.call;
        return work.promise;
      },
      releaseAttempt: (leaseId) => this.releaseById(leaseId),
    });
    void answer.then(
      (result) => {
        if (!result.acquired || !sent) return;
        this.onKnownAcquire?.(result.lease.leaseId);
        this.onSuccess?.(sent);
      },
      () => undefined,
    );
    return answer;
  }

  /**
   * A third-party store that ignores its signal and undoes nothing: the elector alone must stop
   * waiting, and hand back a win that comes after it gave up (its late-answer hook, drained by stop()).
   */
  private deafAcquire(request: AcquireRequest): Promise<AcquireResult> {
    throwIfAborted(request.signal);
    const work = this.send<AcquireResult>('acquire', {
      identity: request.identity,
      leaseId: `${this.node}:${++this.calls}`,
      leaseDurationMs: request.leaseDurationMs,
    });
    work.call.deaf = true;
    void work.promise.then(
      (result) => result.acquired && this.onSuccess?.(work.call),
      () => undefined,
    );
    return work.promise;
  }

  renew(lease: Lease, options: RenewOptions): Promise<void> {
    throwIfAborted(options.signal);
    const work = this.send<void>('renew', { leaseId: lease.leaseId, leaseDurationMs: options.leaseDurationMs });
    const answer = this.bounded(options.signal, work.promise);
    void answer.then(
      () => this.onSuccess?.(work.call),
      () => undefined,
    );
    return answer;
  }

  release(lease: Lease, options: CallOptions): Promise<void> {
    throwIfAborted(options.signal);
    return this.bounded(options.signal, this.send<void>('release', { leaseId: lease.leaseId }).promise);
  }

  read(_election: string, options: CallOptions): Promise<LeaseInfo> {
    throwIfAborted(options.signal);
    return this.bounded(options.signal, this.send<LeaseInfo>('read', {}).promise);
  }

  /** A driver that ignores its signal now and then: the elector must stop waiting by itself. */
  private deaf(): boolean {
    return this.server.faultsOn && this.world.rng.chance(this.server.faults.deaf);
  }

  private bounded<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
    return this.deaf() ? work : untilAborted(signal, work);
  }

  watch(_election: string, onMayBeFree: () => void): LeaseWatch {
    return this.server.watch(this.node, onMayBeFree);
  }

  /** The store's own clean-up, not the elector's call: it may outlive the elector's stop(). */
  private async releaseById(leaseId: string): Promise<void> {
    await this.send<void>('release', { leaseId }, true).promise;
  }

  private send<T>(
    kind: CallKind,
    payload: { identity?: string; leaseId?: string; leaseDurationMs?: number },
    internal = false,
  ): { promise: Promise<T>; call: SentCall } {
    const { world, server } = this;
    const rng = world.rng;
    const faults = server.faults;
    const call: SentCall = {
      node: this.node,
      kind,
      leaseId: payload.leaseId,
      local: this.clock.now(),
      wall: this.clock.wallNow(),
      at: world.now,
    };
    if (this.stoppedAt !== undefined && !internal)
      this.afterStop.push(`${kind} sent ${world.now - this.stoppedAt} ms after stop()`);
    if (server.faultsOn) call.fault = server.partitioned.get(this.node) ?? pickFault(rng.next(), faults);
    server.sent.push(call);
    if (process.env.SIM_TRACE) {
      console.log(`${world.now.toFixed(2)} ${this.node} send ${kind} ${payload.leaseId ?? ''} ${call.fault ?? ''}`);
    }
    const oneWay = () => (call.fault === 'slow' ? rng.between(0.5, 1) * faults.slowMs : rng.next() * faults.latencyMs);
    const promise = new Promise<T>((resolve, reject) => {
      const reply = (settle: () => void) =>
        world.schedule(
          world.now + oneWay(),
          () => {
            call.repliedAt = world.now;
            settle();
          },
          this.node,
        );
      const arrive = async () => {
        if (call.fault === 'error') {
          reply(() => reject(new TransientLeaseStoreError('simulated network error before the server')));
          return;
        }
        let outcome: { ok: true; value: T } | { ok: false; error: unknown } = { ok: false, error: undefined };
        // A duplicate is a driver's resend after a lost answer: the server applies it twice and
        // the client reads the second answer (the Redis case: it must still say "acquired").
        for (let copy = call.fault === 'duplicate' ? 2 : 1; copy > 0; copy--) {
          try {
            outcome = { ok: true, value: (await server.apply(kind, payload)) as T };
          } catch (error) {
            outcome = { ok: false, error };
          }
        }
        if (kind === 'acquire' && outcome.ok && (outcome.value as AcquireResult).acquired) {
          if (!server.granted.has(payload.leaseId as string)) server.granted.set(payload.leaseId as string, call);
          if (!internal) this.onAcquireGranted?.();
        }
        if (call.fault === 'lost') {
          reply(() => reject(new TransientLeaseStoreError('simulated connection reset after the server applied')));
          return;
        }
        reply(() => (outcome.ok ? resolve(outcome.value) : reject(outcome.error)));
      };
      if (call.fault !== 'blackhole') world.schedule(world.now + oneWay(), arrive);
    });
    return { promise, call };
  }
}

function pickFault(roll: number, faults: NetworkFaults): SentCall['fault'] {
  const odds: Array<[NonNullable<SentCall['fault']>, number]> = [
    ['error', faults.error],
    ['lost', faults.lostReply],
    ['duplicate', faults.duplicate],
    ['slow', faults.slow],
  ];
  let edge = 0;
  for (const [fault, p] of odds) {
    edge += p;
    if (roll < edge) return fault;
  }
  return undefined;
}
