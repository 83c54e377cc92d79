// Standby followers (`activeFollowers`): only K followers per election poll every retry interval,
// the rest every standbyPollMs, so a big fleet's load on the store stays flat. Who is active is held
// as slot leases in the same store. Failover must not slow down while one active follower lives:
// crash ≤ lease + retry, graceful release ≤ one retry; a crashed active follower is replaced.
import type { Elector } from '../../lib/election/elector.js';
import { STANDBY_KEY_PREFIX, standbySlotKey, standbySlotLeaseMs } from '../../lib/election/standby.js';
import type {
  AcquireRequest,
  AcquireResult,
  CallOptions,
  Lease,
  LeaseStore,
  RenewOptions,
} from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { timings, useElectorFixture } from './elector-fixture.js';

const { leaseDurationMs, retryIntervalMs } = timings;
const STANDBY_POLL_MS = 6_000;
const standby = { activeFollowers: 1, standbyPollMs: STANDBY_POLL_MS };

/**
 * One replica's view of the shared store: counts its acquires of the election (not of slots), and
 * `crash()` makes every later call hang until its signal aborts — a process that died mid-flight:
 * nothing released, its leases expire in the store.
 */
class Replica implements LeaseStore {
  readonly name: string;
  readonly limits: LeaseStore['limits'];
  electionPolls: number[] = [];
  private crashed = false;

  constructor(
    private readonly inner: InMemoryLeaseStore,
    private readonly now: () => number,
    withWatch: boolean,
  ) {
    this.name = inner.name;
    this.limits = inner.limits;
    if (!withWatch) Object.defineProperty(this, 'watch', { value: undefined });
  }

  crash(): void {
    this.crashed = true;
  }

  private hang<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    if (!this.crashed) return work();
    return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  }

  acquire(request: AcquireRequest): Promise<AcquireResult> {
    if (!request.election.startsWith(STANDBY_KEY_PREFIX) && !this.crashed) this.electionPolls.push(this.now());
    return this.hang(request.signal, () => this.inner.acquire(request));
  }

  renew(lease: Lease, options: RenewOptions): Promise<void> {
    return this.hang(options.signal, () => this.inner.renew(lease, options));
  }

  release(lease: Lease, options: CallOptions): Promise<void> {
    return this.hang(options.signal, () => this.inner.release(lease, options));
  }

  read(election: string, options: CallOptions) {
    return this.hang(options.signal, () => this.inner.read(election, options));
  }

  watch(election: string, onMayBeFree: () => void) {
    return this.inner.watch(election, onMayBeFree);
  }

  requestHandover(...args: Parameters<InMemoryLeaseStore['requestHandover']>) {
    return this.hang(args[1].signal, () => this.inner.requestHandover(...args));
  }

  readHandover(...args: Parameters<InMemoryLeaseStore['readHandover']>) {
    return this.hang(args[1].signal, () => this.inner.readHandover(...args));
  }

  clearHandover(...args: Parameters<InMemoryLeaseStore['clearHandover']>) {
    return this.hang(args[2].signal, () => this.inner.clearHandover(...args));
  }
}

describe('Elector: standby followers (activeFollowers)', () => {
  const fx = useElectorFixture();

  function fleet(size: number, { withWatch = false, extra = standby } = {}) {
    const replicas = Array.from({ length: size }, () => new Replica(fx.memory, () => fx.clock.now(), withWatch));
    const electors = replicas.map((replica, i) => fx.elector(`r${i}`, replica, extra));
    return { replicas, electors };
  }

  async function startAll(electors: Elector[]) {
    for (const elector of electors) await elector.start();
    await fx.clock.advance(retryIntervalMs);
  }

  /** A crashed replica's calls end only by their timeouts: run the clock while everyone stops. */
  async function stopAll(electors: Elector[]) {
    const stopping = Promise.all(electors.map((e) => e.stop()));
    await fx.clock.advance(10_000);
    await stopping;
  }

  const leaders = (electors: Elector[]) => electors.filter((e) => e.isLeader());
  const pollsIn = (replica: Replica, from: number) => replica.electionPolls.filter((t) => t >= from).length;

  it('only activeFollowers followers poll every retry interval; the others poll every standbyPollMs', async () => {
    const { replicas, electors } = fleet(6);
    await startAll(electors);
    expect(leaders(electors)).toHaveLength(1);
    const from = fx.clock.now() + STANDBY_POLL_MS;
    await fx.clock.advance(STANDBY_POLL_MS + 60_000);
    const followers = replicas.filter((_, i) => !electors[i].isLeader());
    const counts = followers.map((replica) => pollsIn(replica, from)).sort((a, b) => b - a);
    // 60 s: an active follower ≈ 60 / 0.4 = 150 polls; a standby ≈ 60 / 6 = 10 (±15 % jitter).
    expect(counts[0]).toBeGreaterThanOrEqual(Math.floor(60_000 / (retryIntervalMs * 1.15)));
    for (const standbyCount of counts.slice(1)) {
      expect(standbyCount).toBeGreaterThanOrEqual(Math.floor(60_000 / (STANDBY_POLL_MS * 1.15)));
      expect(standbyCount).toBeLessThanOrEqual(Math.ceil(60_000 / (STANDBY_POLL_MS * 0.85)) + 1);
    }
    const total = counts.reduce((a, b) => a + b, 0);
    // Without standby: 5 followers × 150 = 750 polls.
    expect(total).toBeLessThan(60_000 / (retryIntervalMs * 0.85) + 4 * (60_000 / (STANDBY_POLL_MS * 0.85) + 1) + 1);
  });

  it('a crashed leader is replaced within lease + retry, by the active follower', async () => {
    const { replicas, electors } = fleet(5);
    await startAll(electors);
    await fx.clock.advance(STANDBY_POLL_MS * 2);
    const leader = electors.findIndex((e) => e.isLeader());
    replicas[leader].crash();
    const crashedAt = fx.clock.now();
    let replacedAt: number | undefined;
    while (fx.clock.now() - crashedAt < leaseDurationMs + 4 * retryIntervalMs && replacedAt === undefined) {
      await fx.clock.advance(20);
      if (electors.some((e, i) => i !== leader && e.isLeader())) replacedAt = fx.clock.now();
    }
    expect(replacedAt).toBeDefined();
    expect((replacedAt ?? 0) - crashedAt).toBeLessThanOrEqual(leaseDurationMs + retryIntervalMs * 1.15 + 40);
    await stopAll(electors);
  });

  it('a graceful stop is taken over within one retry interval', async () => {
    const { electors } = fleet(5);
    await startAll(electors);
    await fx.clock.advance(STANDBY_POLL_MS * 2);
    const leader = electors.find((e) => e.isLeader());
    await leader?.stop();
    const stoppedAt = fx.clock.now();
    while (!electors.some((e) => e !== leader && e.isLeader()) && fx.clock.now() - stoppedAt < 10_000) {
      await fx.clock.advance(20);
    }
    expect(fx.clock.now() - stoppedAt).toBeLessThanOrEqual(retryIntervalMs * 1.15 + 40);
  });

  it('a new leader hands its slot back, and a crashed active follower is replaced by a standby', async () => {
    const { replicas, electors } = fleet(5);
    await startAll(electors);
    await fx.clock.advance(STANDBY_POLL_MS * 2);
    const slotHolder = async () =>
      (await fx.memory.read(standbySlotKey('jobs', 0), { signal: new AbortController().signal })).holder;
    const leaderId = electors.find((e) => e.isLeader())?.identity;
    const active = await slotHolder();
    expect(active).toBeDefined();
    expect(active).not.toBe(leaderId);

    // Crash the active follower: its slot lease expires, a standby takes the slot.
    const crashed = electors.findIndex((e) => e.identity === active);
    replicas[crashed].crash();
    const slotLeaseMs = standbySlotLeaseMs(fx.memory, leaseDurationMs);
    await fx.clock.advance(slotLeaseMs + STANDBY_POLL_MS * 1.15 + 100);
    const successor = await slotHolder();
    expect(successor).toBeDefined();
    expect([active, leaderId]).not.toContain(successor);

    // The successor is active now: the crashed leader is replaced within lease + retry.
    const leader = electors.findIndex((e) => e.isLeader());
    replicas[leader].crash();
    const crashedAt = fx.clock.now();
    while (!electors.some((e, i) => i !== leader && i !== crashed && e.isLeader())) {
      await fx.clock.advance(20);
      expect(fx.clock.now() - crashedAt).toBeLessThanOrEqual(leaseDurationMs + retryIntervalMs * 1.15 + 40);
    }
    // It leads now and gave its slot back: within a standby poll another follower holds it.
    const newLeader = electors.find((e) => e.isLeader())?.identity;
    await fx.clock.advance(STANDBY_POLL_MS * 1.15 + 100);
    const refilled = await slotHolder();
    expect(refilled).toBeDefined();
    expect([newLeader, active]).not.toContain(refilled);
    await stopAll(electors);
  });

  it('an active follower that becomes leader gives its slot back at once, and a standby takes it', async () => {
    const { electors } = fleet(4);
    await startAll(electors);
    await fx.clock.advance(STANDBY_POLL_MS * 2);
    const slotHolder = async () =>
      (await fx.memory.read(standbySlotKey('jobs', 0), { signal: new AbortController().signal })).holder;
    const activeId = await slotHolder();
    const leader = electors.find((e) => e.isLeader());
    await leader?.requestHandover({ to: activeId });
    const askedAt = fx.clock.now();
    while (!electors.find((e) => e.identity === activeId)?.isLeader()) {
      await fx.clock.advance(20);
      expect(fx.clock.now() - askedAt).toBeLessThanOrEqual(timings.renewIntervalMs + retryIntervalMs * 1.15 + 100);
    }
    await fx.clock.advance(1);
    expect(await slotHolder()).toBeUndefined();
    await fx.clock.advance(STANDBY_POLL_MS * 1.15 + 100);
    const refilled = await slotHolder();
    expect(refilled).toBeDefined();
    expect(refilled).not.toBe(activeId);
  });

  it('on a store that pushes, a release wakes only the active followers', async () => {
    const { replicas, electors } = fleet(6, { withWatch: true });
    await startAll(electors);
    await fx.clock.advance(STANDBY_POLL_MS * 2);
    const leader = electors.find((e) => e.isLeader());
    const before = replicas.map((r) => r.electionPolls.length);
    await leader?.stop();
    await fx.clock.advance(1);
    expect(electors.filter((e) => e !== leader && e.isLeader())).toHaveLength(1);
    const woken = replicas.filter((r, i) => r.electionPolls.length > before[i]);
    expect(woken).toHaveLength(1);
  });

  it('a directed handover to a standby reaches it at its next standby poll (the lease stays reserved for it)', async () => {
    const { electors } = fleet(5);
    await startAll(electors);
    await fx.clock.advance(STANDBY_POLL_MS * 2);
    const active = (await fx.memory.read(standbySlotKey('jobs', 0), { signal: new AbortController().signal })).holder;
    const heir = electors.find((e) => !e.isLeader() && e.identity !== active);
    const asker = electors.find((e) => !e.isLeader() && e !== heir);
    await asker?.requestHandover({ to: heir?.identity });
    const askedAt = fx.clock.now();
    while (!heir?.isLeader()) {
      await fx.clock.advance(50);
      expect(fx.clock.now() - askedAt).toBeLessThanOrEqual(timings.renewIntervalMs + STANDBY_POLL_MS * 1.15 + 200);
    }
    expect(leaders(electors)).toEqual([heir]);
  });

  it('asking for a handover to itself, a standby polls as an active follower until it leads', async () => {
    const { electors } = fleet(4);
    await startAll(electors);
    await fx.clock.advance(STANDBY_POLL_MS * 2);
    const active = (await fx.memory.read(standbySlotKey('jobs', 0), { signal: new AbortController().signal })).holder;
    const asker = electors.find((e) => !e.isLeader() && e.identity !== active);
    await asker?.requestHandover({ to: asker.identity });
    const askedAt = fx.clock.now();
    while (!asker?.isLeader()) {
      await fx.clock.advance(20);
      expect(fx.clock.now() - askedAt).toBeLessThanOrEqual(timings.renewIntervalMs + retryIntervalMs * 1.15 + 100);
    }
  });

  it('stopping releases the slot and leaves no timer (the fixture checks)', async () => {
    const { electors } = fleet(3);
    await startAll(electors);
    await fx.clock.advance(STANDBY_POLL_MS);
    await Promise.all(electors.map((e) => e.stop()));
    const slot = await fx.memory.read(standbySlotKey('jobs', 0), { signal: new AbortController().signal });
    expect(slot.held).toBe(false);
  });

  it('slot keys can never be an election name and fit the SQL stores’ 200-character column', () => {
    expect(standbySlotKey('jobs', 2)).toBe('~standby.2.jobs');
    const long = 'a'.repeat(200);
    const key = standbySlotKey(long, 15);
    expect(key.length).toBeLessThanOrEqual(200);
    expect(key).not.toBe(standbySlotKey(`${'a'.repeat(199)}b`, 15));
    expect(standbySlotLeaseMs(new InMemoryLeaseStore(), 15_000)).toBe(45_000);
  });

  it('refuses bad standby options at construction, naming the option and its range', () => {
    expect(() => fx.elector('x', fx.memory, { activeFollowers: 0 })).toThrow(
      /activeFollowers must be a whole number from 1 to 16/,
    );
    expect(() => fx.elector('x', fx.memory, { activeFollowers: 2.5 })).toThrow(/activeFollowers/);
    expect(() => fx.elector('x', fx.memory, { activeFollowers: 17 })).toThrow(/activeFollowers/);
    expect(() => fx.elector('x', fx.memory, { standbyPollMs: 10_000 })).toThrow(/standbyPollMs needs activeFollowers/);
    expect(() => fx.elector('x', fx.memory, { activeFollowers: 2, standbyPollMs: retryIntervalMs - 1 })).toThrow(
      /standbyPollMs must be whole milliseconds from retryIntervalMs \(400\) to 3600000/,
    );
  });
});
