import { throwIfAborted, untilAborted } from '../../lib/shared/abort.js';
import type { Clock } from '../../lib/shared/clock.js';
import { LeaseLostError, TransientLeaseStoreError, toLeaseStoreError } from '../../lib/shared/errors.js';
import type {
  AcquireRequest,
  AcquireResult,
  CallOptions,
  HandoverRequest,
  LeaderStateEntry,
  Lease,
  LeaseInfo,
  LeaseMeta,
  LeaseStore,
  LeaseWatch,
  RecordWriteOptions,
  ReleaseOptions,
  RenewOptions,
  RenewWithOptions,
  RenewWithReply,
  SharedRecord,
  StateCallOptions,
} from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { prepareRecordWrite } from '../../lib/stores/record-support.js';
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

export type CallKind =
  | 'acquire'
  | 'renew'
  | 'release'
  | 'read'
  | 'requestHandover'
  | 'readHandover'
  | 'clearHandover'
  | 'writeState'
  | 'readState'
  | 'readRecord'
  | 'writeRecord'
  | 'unwatch';

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
  /** A directed handover's reservation of the free lease (true time). */
  reservedFor?: string;
  reservedUntil?: number;
  /** The pending handover request, as the store holds it. */
  request?: HandoverRequest;
  /** The holder's meta as last written (acquire, or a renew that sent one). */
  meta?: LeaseMeta;
}

/** What a call carries to the server (each kind uses its own fields). */
export interface Payload {
  election?: string;
  identity?: string;
  leaseId?: string;
  leaseDurationMs?: number;
  meta?: LeaseMeta;
  handoverTo?: string;
  reserveMs?: number;
  request?: HandoverRequest;
  id?: string;
  key?: string;
  value?: unknown;
  /** A shared record's write condition. */
  ifVersion?: string | null;
  /** A folded renewal's writes and reads (renewWith). */
  folded?: Pick<RenewWithOptions, 'writeState' | 'readHandover' | 'readRecords'>;
}

/** A shared record's write as the server applied it (compare-and-set passed): who, when, what. */
export interface RecordWritten {
  election: string;
  key: string;
  value: unknown;
  node: string;
  /** True time the server applied it. */
  at: number;
}

/** A leader-state entry as the server applied it (the lease's condition passed): which term wrote what. */
export interface StateWritten {
  election: string;
  key: string | undefined;
  value: unknown;
  /** The term of the lease it was written with. */
  term: number;
  /** True time the server applied it. */
  at: number;
}

/**
 * The store's server side: an InMemoryLeaseStore on true time, behind lease ids the clients
 * propose (as Azure, Redis and SQL stores do), idempotent for a resend of the same id. Every
 * capability (handover requests, reservations, meta, leader state) is the in-memory store's own
 * code, so its rules (a spread request never replaces an operator's) are the ones simulated. A
 * shadow copy per election answers the checks synchronously and is cross-checked against the store.
 */
export class SimLeaseServer {
  readonly inner: InMemoryLeaseStore;
  private readonly byProposed = new Map<string, Lease>();
  private readonly shadows = new Map<string, Shadow>();
  private readonly watchers = new Map<string, Map<string, () => void>>();
  readonly sent: SentCall[] = [];
  /** Acquires the server granted, by proposed id, with when they were sent. */
  readonly granted = new Map<string, SentCall>();
  readonly modelErrors: string[] = [];
  /**
   * Every term granted, in order: who won which election when (true time), and the request that
   * handed it over, when its holder released the lease reserved for the winner to honour it.
   */
  readonly terms: Array<{ election: string; term: number; holder: string; at: number; by?: HandoverRequest }> = [];
  /** The pending request each recorded request replaced, by the new request's id. */
  readonly replaced = new Map<string, HandoverRequest>();
  /** When each recorded request was written, and first read back (true time): who could have seen what. */
  readonly requestWrittenAt = new Map<string, number>();
  readonly requestReadAt = new Map<string, number>();
  /** Every shared-record write the server applied, in order (the job board's history, issue #28). */
  readonly recordWrites: RecordWritten[] = [];
  /** Every leader-state write applied (a tick's record among them), in order. */
  readonly stateWrites: StateWritten[] = [];
  /** Handover requests the server received, by reason (`operator`, `spread`). */
  readonly requestsByReason = new Map<string, number>();
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
  }

  private shadow(election: string): Shadow {
    let shadow = this.shadows.get(election);
    if (!shadow) {
      shadow = { term: 0, expiresAt: 0 };
      this.shadows.set(election, shadow);
    }
    return shadow;
  }

  /** The lease of `election` as the store holds it right now. */
  slot(election = this.election): {
    held: boolean;
    holder?: string;
    leaseId?: string;
    term: number;
    expiresAt: number;
    reservedFor?: string;
    request?: HandoverRequest;
    meta?: LeaseMeta;
  } {
    const s = this.shadow(election);
    const reserved = s.reservedFor !== undefined && this.world.now < (s.reservedUntil ?? 0);
    return {
      holder: s.holder,
      leaseId: s.leaseId,
      term: s.term,
      expiresAt: s.expiresAt,
      held: s.leaseId !== undefined && this.world.now < s.expiresAt,
      ...(reserved ? { reservedFor: s.reservedFor } : {}),
      ...(s.request ? { request: s.request } : {}),
      ...(s.meta ? { meta: s.meta } : {}),
    };
  }

  async apply(kind: CallKind, payload: Payload): Promise<unknown> {
    const signal = new AbortController().signal;
    const election = payload.election ?? this.election;
    const shadow = this.shadow(election);
    switch (kind) {
      case 'acquire': {
        const current = this.slot(election);
        const proposed = payload.leaseId as string;
        if (current.held && current.leaseId === proposed) {
          return this.toOuter(this.byProposed.get(proposed) as Lease, proposed);
        }
        const result = await this.inner.acquire({
          election,
          identity: payload.identity as string,
          leaseDurationMs: payload.leaseDurationMs as number,
          signal,
          ...(payload.meta ? { meta: payload.meta } : {}),
        });
        if (!result.acquired) return result;
        this.byProposed.set(proposed, result.lease);
        const { holder, term } = result.lease;
        // Handed over: the last holder released it reserved for this winner, the request still pending.
        const by =
          current.reservedFor === holder && shadow.request?.to === holder && shadow.request.term === shadow.term
            ? shadow.request
            : undefined;
        this.terms.push({ election, term, holder, at: this.world.now, ...(by ? { by } : {}) });
        shadow.meta = payload.meta as LeaseMeta | undefined;
        Object.assign(shadow, {
          holder: result.lease.holder,
          leaseId: proposed,
          term: result.lease.term,
          expiresAt: this.world.now + (payload.leaseDurationMs as number),
          reservedFor: undefined,
          reservedUntil: undefined,
        });
        await this.crossCheck(election);
        return this.toOuter(result.lease, proposed);
      }
      case 'renew': {
        const lease = this.byProposed.get(payload.leaseId as string);
        if (!lease) throw new LeaseLostError(`lease ${payload.leaseId} unknown`);
        const options = {
          leaseDurationMs: payload.leaseDurationMs as number,
          signal,
          ...(payload.meta ? { meta: payload.meta } : {}),
        };
        // A folded renewal (renewWith): the same renewal, its writes and reads in one request.
        const { folded } = payload;
        const reply = folded
          ? await this.inner.renewWith(lease, { ...options, ...folded })
          : await this.inner.renew(lease, options);
        const pending = reply?.handover;
        if (pending && !this.requestReadAt.has(pending.id)) this.requestReadAt.set(pending.id, this.world.now);
        shadow.expiresAt = this.world.now + (payload.leaseDurationMs as number);
        if (payload.meta) shadow.meta = payload.meta as LeaseMeta;
        await this.crossCheck(election);
        return reply;
      }
      case 'release': {
        const lease = this.byProposed.get(payload.leaseId as string);
        if (!lease) return undefined;
        const reservation =
          payload.handoverTo === undefined && payload.reserveMs === undefined
            ? {}
            : { handoverTo: payload.handoverTo, reserveMs: payload.reserveMs };
        const wasHeld = this.slot(lease.election).held && this.shadow(lease.election).leaseId === payload.leaseId;
        await this.inner.release(lease, { signal, ...reservation });
        const s = this.shadow(lease.election);
        if (s.leaseId === payload.leaseId) {
          Object.assign(s, { holder: undefined, leaseId: undefined, expiresAt: 0 });
          if (wasHeld && payload.handoverTo !== undefined) {
            s.reservedFor = payload.handoverTo;
            s.reservedUntil = this.world.now + (payload.reserveMs as number);
          }
        }
        await this.crossCheck(lease.election);
        return undefined;
      }
      case 'read':
        return this.inner.read(election, { signal });
      case 'requestHandover': {
        const request = payload.request as HandoverRequest;
        const previous = shadow.request;
        const written = await this.inner.requestHandover(request, { signal });
        if (written !== false) {
          if (previous) this.replaced.set(request.id, previous);
          shadow.request = request;
          this.requestWrittenAt.set(request.id, this.world.now);
        }
        this.requestsByReason.set(request.reason, (this.requestsByReason.get(request.reason) ?? 0) + 1);
        return written;
      }
      case 'readHandover': {
        const pending = await this.inner.readHandover(election, { signal });
        if (pending && !this.requestReadAt.has(pending.id)) this.requestReadAt.set(pending.id, this.world.now);
        return pending;
      }
      case 'clearHandover':
        await this.inner.clearHandover(election, payload.id as string, { signal });
        if (shadow.request?.id === payload.id) shadow.request = undefined;
        return undefined;
      case 'writeState': {
        const lease = this.byProposed.get(payload.leaseId as string);
        if (!lease) throw new LeaseLostError(`lease ${payload.leaseId} unknown`);
        await this.inner.writeState(lease, payload.value, { signal, key: payload.key });
        const key = payload.key as string | undefined;
        this.stateWrites.push({
          election: lease.election,
          key,
          value: payload.value,
          term: lease.term,
          at: this.world.now,
        });
        return undefined;
      }
      case 'readState':
        return this.inner.readState(election, { signal, key: payload.key });
      case 'readRecord':
        return this.inner.readRecord(election, payload.key as string, { signal });
      case 'writeRecord': {
        const key = payload.key as string;
        const written = await this.inner.writeRecord(election, key, payload.value, {
          signal,
          ifVersion: payload.ifVersion as string | null,
        });
        if (written) {
          const value = (await this.inner.readRecord(election, key, { signal }))?.value;
          this.recordWrites.push({ election, key, value, node: payload.identity as string, at: this.world.now });
        }
        return written;
      }
      case 'unwatch':
        this.watchers.get(election)?.delete(payload.identity as string);
        return undefined;
    }
  }

  /** A killed process: nothing is pushed to it any more. */
  forget(node: string): void {
    for (const listeners of this.watchers.values()) listeners.delete(node);
  }

  watch(node: string, listener: () => void, election = this.election): LeaseWatch & { key: string } {
    let listeners = this.watchers.get(election);
    if (!listeners) {
      listeners = new Map();
      this.watchers.set(election, listeners);
      this.inner.watch(election, () => this.notifyWatchers(election));
    }
    listeners.set(node, listener);
    return { key: node, close: async () => void listeners.delete(node) };
  }

  private notifyWatchers(election: string): void {
    for (const [node, listener] of this.watchers.get(election) ?? []) {
      if (this.faultsOn && this.world.rng.chance(this.faults.lostPush)) continue;
      this.world.schedule(this.world.now + this.world.rng.next() * this.faults.latencyMs, listener, node);
    }
  }

  private toOuter(lease: Lease, leaseId: string): AcquireResult {
    return { acquired: true, lease: { election: lease.election, holder: lease.holder, term: lease.term, leaseId } };
  }

  private async crossCheck(election: string): Promise<void> {
    const info = await this.inner.read(election, { signal: new AbortController().signal });
    const mine = this.slot(election);
    if (
      info.held !== mine.held ||
      info.term !== mine.term ||
      (info.held && info.holder !== mine.holder) ||
      info.reservedFor !== mine.reservedFor
    ) {
      this.modelErrors.push(`store shadow ${JSON.stringify(mine)} disagrees with the store ${JSON.stringify(info)}`);
    }
  }
}

/**
 * One node's view of the store: every call crosses the simulated network (latency, errors, lost
 * answers after the server applied the write, duplicates, spikes) and honours its signal the way
 * the real stores do today (an abandoned acquire is released once its outcome is known).
 */
/**
 * Whether a run's store folds renewals (renewWith): half the runs, by their seed's parity, so the
 * campaign covers both shapes; `SIM_FOLD=never` keeps every run on the separate calls (a mutant's
 * campaign whose race needs the holder's read to come a round trip after its renewal); `SIM_FOLD=flip`
 * swaps the halves, so each run's schedule is tried on the other shape.
 */
export function foldsIn(seed: number): boolean {
  const { SIM_FOLD } = process.env;
  if (SIM_FOLD === 'never') return false;
  return seed % 2 === (SIM_FOLD === 'flip' ? 0 : 1);
}

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
    /** A watch whose cancel is a request to the server (etcd), not a local unsubscribe. */
    private readonly cancelWaitsForServer = false,
    /** The store folds renewals (renewWith, issue 29); otherwise the elector makes the separate calls. */
    folds = false,
  ) {
    this.limits = server.inner.limits;
    if (!folds) Object.defineProperty(this, 'renewWith', { value: undefined });
  }

  acquire(request: AcquireRequest): Promise<AcquireResult> {
    if (this.deaf()) return this.deafAcquire(request);
    // The stores' one rule for acquires of unknown outcome (lib/stores/store-support.ts): anything
    // but a clear answer releases the attempt's own lease id, at once and after the call settled.
    let sent: SentCall | undefined;
    const answer = this.storeCalls.acquire(request, {
      attempt: (leaseId) => {
        const work = this.send<AcquireResult>('acquire', {
          election: request.election,
          identity: request.identity,
          leaseId,
          leaseDurationMs: request.leaseDurationMs,
          ...(request.meta ? { meta: request.meta } : {}),
        });
        sent = work.call;
        return work.promise;
      },
      releaseAttempt: (leaseId) => this.releaseById(request.election, leaseId),
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
      election: request.election,
      identity: request.identity,
      leaseId: `${this.node}:${++this.calls}`,
      leaseDurationMs: request.leaseDurationMs,
      ...(request.meta ? { meta: request.meta } : {}),
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
    const work = this.send<void>('renew', {
      election: lease.election,
      leaseId: lease.leaseId,
      leaseDurationMs: options.leaseDurationMs,
      ...(options.meta ? { meta: options.meta } : {}),
    });
    const answer = this.bounded(options.signal, work.promise);
    void answer.then(
      () => this.onSuccess?.(work.call),
      () => undefined,
    );
    return answer;
  }

  renewWith(lease: Lease, options: RenewWithOptions): Promise<RenewWithReply> {
    throwIfAborted(options.signal);
    const { writeState, readHandover, readRecords } = options;
    const work = this.send<RenewWithReply>('renew', {
      election: lease.election,
      leaseId: lease.leaseId,
      leaseDurationMs: options.leaseDurationMs,
      ...(options.meta ? { meta: options.meta } : {}),
      folded: { writeState, readHandover, readRecords },
    });
    const answer = this.bounded(options.signal, work.promise);
    void answer.then(
      () => this.onSuccess?.(work.call),
      () => undefined,
    );
    return answer;
  }

  release(lease: Lease, options: ReleaseOptions): Promise<void> {
    throwIfAborted(options.signal);
    const { handoverTo, reserveMs } = options;
    const reservation = handoverTo === undefined && reserveMs === undefined ? {} : { handoverTo, reserveMs };
    return this.bounded(
      options.signal,
      this.send<void>('release', { election: lease.election, leaseId: lease.leaseId, ...reservation }).promise,
    );
  }

  read(election: string, options: CallOptions): Promise<LeaseInfo> {
    return this.call<LeaseInfo>('read', { election }, options);
  }

  // The handover and leader-state capabilities: the in-memory store's own code behind the network.
  get conditionalSpreadRequests(): boolean | undefined {
    return (this.server.inner as { conditionalSpreadRequests?: boolean }).conditionalSpreadRequests;
  }

  requestHandover(request: HandoverRequest, options: CallOptions): Promise<boolean | undefined> {
    return this.call<boolean | undefined>('requestHandover', { election: request.election, request }, options);
  }

  readHandover(election: string, options: CallOptions): Promise<HandoverRequest | undefined> {
    return this.call('readHandover', { election }, options);
  }

  clearHandover(election: string, id: string, options: CallOptions): Promise<void> {
    return this.call('clearHandover', { election, id }, options);
  }

  writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    return this.call(
      'writeState',
      { election: lease.election, leaseId: lease.leaseId, value, key: options.key },
      options,
    );
  }

  readState(election: string, options: StateCallOptions): Promise<LeaderStateEntry | undefined> {
    return this.call('readState', { election, key: options.key }, options);
  }

  // Shared records (job control's board): the in-memory store's compare-and-set behind the network.
  readRecord(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined> {
    return this.call('readRecord', { election, key }, options);
  }

  writeRecord(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean> {
    // As every store does: a bad key, condition or value fails here, before anything is sent.
    const { json } = prepareRecordWrite(this, key, value, options);
    // What travels is the JSON of the moment of the send, as on a real connection.
    const payload = { election, key, value: JSON.parse(json), ifVersion: options.ifVersion, identity: this.node };
    return this.call('writeRecord', payload, options);
  }

  private call<T>(kind: CallKind, payload: Payload, options: CallOptions): Promise<T> {
    throwIfAborted(options.signal);
    return this.bounded(options.signal, this.send<T>(kind, payload).promise);
  }

  /** A driver that ignores its signal now and then: the elector must stop waiting by itself. */
  private deaf(): boolean {
    return this.server.faultsOn && this.world.rng.chance(this.server.faults.deaf);
  }

  private bounded<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
    return this.deaf() ? work : untilAborted(signal, work);
  }

  watch(election: string, onMayBeFree: () => void): LeaseWatch {
    const watch = this.server.watch(this.node, onMayBeFree, election);
    if (!this.cancelWaitsForServer) return watch;
    // As etcd's watch cancel does: it waits for the server's answer, so a black-holed connection
    // holds it for as long as the connection stays open.
    return { close: () => this.send<void>('unwatch', { election, identity: watch.key }, true).promise };
  }

  /** The store's own clean-up, not the elector's call: it may outlive the elector's stop(). */
  private async releaseById(election: string, leaseId: string): Promise<void> {
    await this.send<void>('release', { election, leaseId }, true).promise;
  }

  private send<T>(kind: CallKind, payload: Payload, internal = false): { promise: Promise<T>; call: SentCall } {
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
