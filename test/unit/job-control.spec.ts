// Issue 28, the app side of job control on one fake clock: the leader's gate (no job runs in a term
// before the board was read in it; a paused job is skipped from memory, with no store call), run-now
// claimed then run once, the history buffered between renewals, the catalogue once per term. Election
// runtimes built outside Nest (as the simulation builds them) over the in-memory store; calls made
// through the real LeaderOnlyRunner, as the decorator makes them.
import type { Logger } from '@nestjs/common';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Elector } from '../../lib/election/elector.js';
import { readJobBoard, runNowCommand, updateJobBoard } from '../../lib/election/job-board.calls.js';
import { MAX_RUN_NOW_QUEUE, pauseJob } from '../../lib/election/job-board.js';
import { JOB_CATALOGUE_KEY, type JobRun, jobHistoryKey, readJobHistory } from '../../lib/election/job-history.js';
import { ElectionRegistry } from '../../lib/leadership/election.registry.js';
import { ElectionRuntime } from '../../lib/leadership/election-runtime.js';
import type { JobDefinition } from '../../lib/leadership/jobs/job.definition.js';
import { JobOperations } from '../../lib/leadership/jobs/job.operations.js';
import { MAX_HISTORIES_PER_RENEWAL } from '../../lib/leadership/jobs/job-history.buffer.js';
import { LeaderOnlyRunner, type LeaderOnlySite, leaderOnlySite } from '../../lib/leadership/leader-only.runner.js';
import { OncePerTickRunner } from '../../lib/leadership/once-per-tick.runner.js';
import { resolveModuleOptions } from '../../lib/nest/leader-election.options.js';
import { TransientLeaseStoreError } from '../../lib/shared/errors.js';
import { FakeClock } from '../../lib/shared/fake-clock.js';
import type {
  CallOptions,
  Lease,
  RecordWriteOptions,
  RenewWithOptions,
  RenewWithReply,
  SharedRecord,
  StateCallOptions,
} from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { settleOnFakeClock, timings } from './elector-fixture.js';

/**
 * The in-memory store, counting the calls job control makes, with a switch that fails board reads.
 * It does not fold renewals (its `renewWith` hidden) unless `folds`: job control then makes its
 * separate calls after each renewal, the shape whose faults these tests inject.
 */
class CountingStore extends InMemoryLeaseStore {
  constructor(options: ConstructorParameters<typeof InMemoryLeaseStore>[0], folds = false) {
    super(options);
    if (!folds) Object.defineProperty(this, 'renewWith', { value: undefined });
  }
  renewWithCalls = 0;
  /** Folded renewals that carry writes fail this many more times (a transient error, nothing written). */
  failCarryingRenewals = 0;
  /** How many leader-state writes each folded renewal carried. */
  readonly carried: number[] = [];
  override renewWith(lease: Lease, options: RenewWithOptions): Promise<RenewWithReply> {
    this.renewWithCalls += 1;
    this.carried.push(options.writeState?.length ?? 0);
    if (this.failCarryingRenewals > 0 && (options.writeState?.length ?? 0) > 0) {
      this.failCarryingRenewals -= 1;
      return Promise.reject(new TransientLeaseStoreError('renewal timed out'));
    }
    return super.renewWith(lease, options);
  }
  readonly counts = { readRecord: 0, writeRecord: 0, writeState: new Map<string, number>() };
  failBoardReads = false;
  /** Set: board reads take this long (on the fake clock) before reaching the store. */
  boardReadDelay?: { clock: FakeClock; ms: number };
  /** Board writes fail this many more times (a transient error, nothing written). */
  failRecordWrites = 0;
  /** Set: a board write lands at once but its reply waits for this (a reply held up in the network; the caller may abort it). */
  replyHeld?: Promise<void>;
  override readRecord(election: string, key: string, options: CallOptions): Promise<SharedRecord | undefined> {
    this.counts.readRecord += 1;
    if (this.failBoardReads) return Promise.reject(new TransientLeaseStoreError('board unreachable'));
    const delay = this.boardReadDelay;
    if (!delay) return super.readRecord(election, key, options);
    return new Promise<void>((resolve) => delay.clock.setTimeout(() => resolve(), delay.ms)).then(() =>
      super.readRecord(election, key, options),
    );
  }
  override writeRecord(election: string, key: string, value: unknown, options: RecordWriteOptions): Promise<boolean> {
    this.counts.writeRecord += 1;
    if (this.failRecordWrites > 0) {
      this.failRecordWrites -= 1;
      return Promise.reject(new TransientLeaseStoreError('write timed out'));
    }
    const written = super.writeRecord(election, key, value, options);
    const held = this.replyHeld;
    if (!held) return written;
    // As a real store's client does: the caller's abort rejects a reply still on its way (the write stands).
    const { signal } = options;
    return written.then(
      (result) =>
        new Promise<boolean>((resolve, reject) => {
          const abort = () => reject(signal.reason);
          if (signal.aborted) return abort();
          signal.addEventListener('abort', abort, { once: true });
          void held.then(() => resolve(result));
        }),
    );
  }
  override writeState(lease: Lease, value: unknown, options: StateCallOptions): Promise<void> {
    const key = options.key ?? 'state';
    this.counts.writeState.set(key, (this.counts.writeState.get(key) ?? 0) + 1);
    return super.writeState(lease, value, options);
  }
}

class LogLines {
  readonly lines: Array<{ level: string; message: string }> = [];
  readonly logger = {
    log: (message: string) => this.lines.push({ level: 'log', message }),
    warn: (message: string) => this.lines.push({ level: 'warn', message }),
    error: (message: string) => this.lines.push({ level: 'error', message }),
    debug: (message: string) => this.lines.push({ level: 'debug', message }),
  } as unknown as Logger;
  matching(level: string, pattern: RegExp): string[] {
    return this.lines.filter((l) => l.level === level && pattern.test(l.message)).map((l) => l.message);
  }
}

const never = new AbortController().signal;

describe('job control, leader side (fake clock)', () => {
  let clock: FakeClock;
  let store: CountingStore;
  let logs: LogLines;
  const runtimes: ElectionRuntime[] = [];

  beforeEach(() => {
    clock = new FakeClock(1_000);
    store = new CountingStore({ clock });
    logs = new LogLines();
  });
  afterEach(() =>
    settleOnFakeClock(
      clock,
      runtimes.splice(0).map((runtime) => runtime.stop()),
    ),
  );

  /** One replica: its runtime (with the store job control uses), and the runner the decorator calls. */
  function replica(identity: string) {
    const options = resolveModuleOptions({ store, election: 'jobs', shutdownTimeoutMs: 2_000 });
    const runtime = new ElectionRuntime(
      { options, logger: logs.logger, clock, store },
      (self) =>
        new Elector({
          store,
          election: 'jobs',
          identity,
          clock,
          logger: logs.logger,
          ...timings,
          handover: self.handoverHooks,
        }),
    );
    runtimes.push(runtime);
    const registry = new ElectionRegistry();
    registry.add('jobs', runtime);
    const log = { debugEnabled: () => true, debug: (message: string) => logs.logger.debug(message) };
    const ticks = new OncePerTickRunner(logs.logger as never);
    const runner = new LeaderOnlyRunner(registry, ticks, () => new Error('route'), log);
    return { runtime, runner, ticks };
  }

  /** A scheduled job whose calls return `result()` and are counted in `runs`. */
  function job(name: string, result: () => unknown = () => 'done') {
    const runs: string[] = [];
    const method = function (this: unknown) {
      runs.push(name);
      return result();
    };
    const definition: JobDefinition = {
      name,
      label: `Jobs.${name}`,
      schedule: { kind: 'interval', ms: 100 },
      onceTick: false,
      method,
      invoke: () => method.call(undefined),
      owner: `Jobs.${name} (Jobs)`,
    };
    const site: LeaderOnlySite = leaderOnlySite({
      label: definition.label,
      election: undefined,
      isAsync: false,
      tick: undefined,
      isRoute: () => false,
    });
    return { definition, site, runs, method };
  }

  async function within(what: string, boundMs: number, predicate: () => boolean): Promise<number> {
    const start = clock.now();
    while (!predicate()) {
      if (clock.now() - start > boundMs) throw new Error(`not within ${boundMs} ms: ${what}`);
      await clock.advance(10);
    }
    return clock.now() - start;
  }

  async function history(name: string): Promise<JobRun[]> {
    return readJobHistory(store, 'jobs', name, never);
  }

  it('no job runs in a term before the board is read in it; after that a call costs no store call', async () => {
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    expect(a.runtime.isLeader()).toBe(true);
    // The read started at election is still under way: the call waits for it, then runs.
    const first = a.runner.invoke(report.site, report.method, undefined, []);
    expect(report.runs).toHaveLength(0);
    await expect(first).resolves.toBe('done');
    expect(report.runs).toHaveLength(1);
    const reads = store.counts.readRecord;
    for (let i = 0; i < 50; i++) expect(a.runner.invoke(report.site, report.method, undefined, [])).toBe('done');
    expect(report.runs).toHaveLength(51);
    expect(store.counts.readRecord).toBe(reads);
  });

  it('a slow first read: one call per job waits for it and runs; the calls meanwhile are skipped, not released in a burst', async () => {
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    store.boardReadDelay = { clock, ms: 300 };
    await a.runtime.start(undefined);
    const first = a.runner.invoke(report.site, report.method, undefined, []);
    for (let i = 0; i < 9; i++) {
      await clock.advance(20);
      expect(a.runner.invoke(report.site, report.method, undefined, [])).toBeUndefined();
    }
    expect(report.runs).toHaveLength(0);
    await clock.advance(300);
    await expect(first).resolves.toBe('done');
    expect(report.runs).toHaveLength(1);
    expect(a.runner.invoke(report.site, report.method, undefined, [])).toBe('done');
  });

  it('a pause recorded by another replica stops the runs within one renew interval, from memory; resume restarts them', async () => {
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    await a.runner.invoke(report.site, report.method, undefined, []);
    // Another replica (or the CLI) writes the board; the leader reads it at its next renewal.
    await updateJobBoard(
      store,
      'jobs',
      (board) => pauseJob(board, 'report', { by: 'b', at: 5, reason: 'incident' }),
      never,
    );
    const took = await within(
      'paused',
      timings.renewIntervalMs + 50,
      () => a.runtime.status().jobs?.paused?.length === 1,
    );
    expect(took).toBeLessThanOrEqual(timings.renewIntervalMs + 20);
    const reads = store.counts.readRecord;
    const before = report.runs.length;
    for (let i = 0; i < 20; i++) expect(a.runner.invoke(report.site, report.method, undefined, [])).toBeUndefined();
    expect(report.runs).toHaveLength(before);
    expect(store.counts.readRecord).toBe(reads);
    expect(a.runtime.status().jobs).toMatchObject({ count: 1, paused: ['report'], skippedWhilePaused: 20 });
    expect(
      logs.matching('log', /job "report" paused by b at 1970-01-01T00:00:00.005Z \(reason: incident\)/),
    ).toHaveLength(1);
    // One debug line per pause, not per skip.
    expect(logs.matching('debug', /skipped Jobs.report: job "report" of "jobs" is paused by b/)).toHaveLength(1);

    await updateJobBoard(
      store,
      'jobs',
      (board) => ({ ...board, paused: {}, resumed: { report: { by: 'c', at: 9 } } }),
      never,
    );
    await within('resumed', timings.renewIntervalMs + 50, () => a.runtime.status().jobs?.paused?.length === 0);
    expect(a.runner.invoke(report.site, report.method, undefined, [])).toBe('done');
    expect(logs.matching('log', /job "report" resumed by c at/)).toHaveLength(1);
  });

  it('the board cannot be read in a new term: its jobs are skipped and logged loudly until a read succeeds', async () => {
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    store.failBoardReads = true;
    await a.runtime.start(undefined);
    // The read at election failed already: skipped at once, with no store call of its own.
    const reads = store.counts.readRecord;
    expect(a.runner.invoke(report.site, report.method, undefined, [])).toBeUndefined();
    expect(a.runner.invoke(report.site, report.method, undefined, [])).toBeUndefined();
    expect(store.counts.readRecord).toBe(reads);
    expect(report.runs).toHaveLength(0);
    expect(
      logs.matching('error', /could not read the job board \(board unreachable\); every scheduled/),
    ).not.toHaveLength(0);
    expect(logs.matching('warn', /skipped job "report": the job board of "jobs" has not been read/)).toHaveLength(1);
    store.failBoardReads = false;
    await within('read again', timings.renewIntervalMs + 50, () => a.runtime.status().jobs?.boardReadAt !== null);
    expect(a.runner.invoke(report.site, report.method, undefined, [])).toBe('done');
    expect(logs.matching('log', /the job board could be read again/)).toHaveLength(1);
  });

  it('a read that fails after one succeeded in the term: the leader keeps to the board it read (a pause stays), and says so', async () => {
    const a = replica('a');
    const report = job('report');
    const other = job('other');
    a.runtime.jobs.register(report.definition);
    a.runtime.jobs.register(other.definition);
    await a.runtime.start(undefined);
    await updateJobBoard(store, 'jobs', (board) => pauseJob(board, 'report', { by: 'c', at: 5 }), never);
    await within('paused', timings.renewIntervalMs + 50, () => a.runtime.status().jobs?.paused?.length === 1);
    const readAt = a.runtime.status().jobs?.boardReadAt;
    store.failBoardReads = true;
    await within(
      'a read failed',
      2 * timings.renewIntervalMs,
      () => logs.matching('error', /could not read/).length > 0,
    );
    expect(
      logs.matching(
        'error',
        /could not read the job board \(board unreachable\); its jobs keep following the board as read at /,
      ),
    ).not.toHaveLength(0);
    expect(logs.matching('error', /every scheduled/)).toEqual([]);
    expect(a.runtime.status().jobs?.boardReadAt).toBe(readAt);
    // Decided from the board it read: the paused job stays skipped, the other runs.
    expect(a.runner.invoke(report.site, report.method, undefined, [])).toBeUndefined();
    expect(a.runner.invoke(other.site, other.method, undefined, [])).toBe('done');
    expect(report.runs).toHaveLength(0);
    store.failBoardReads = false;
    await within(
      'read again',
      2 * timings.renewIntervalMs,
      () => logs.matching('log', /could be read again/).length === 1,
    );
  });

  it('run now: claimed off the board, then run exactly once on the leader, even while paused, and recorded', async () => {
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    await updateJobBoard(store, 'jobs', (board) => pauseJob(board, 'report', { by: 'b', at: 5 }), never);
    const command = await runNowCommand(store, 'jobs', { job: 'report', by: 'b' }, never);
    await within('ran', timings.renewIntervalMs + 50, () => report.runs.length === 1);
    expect((await readJobBoard(store, 'jobs', never)).board.runNow).toEqual([]);
    // Nothing more: the command is gone, the job stays paused.
    await clock.advance(4 * timings.renewIntervalMs);
    expect(report.runs).toHaveLength(1);
    expect(a.runtime.status().jobs?.paused).toEqual(['report']);
    expect(
      logs.matching('log', new RegExp(`running job "report" now, as b asked at .* \\(command ${command.id}\\)`)),
    ).toHaveLength(1);
    const runs = await history('report');
    expect(runs).toEqual([
      expect.objectContaining({
        job: 'report',
        trigger: 'run-now',
        commandId: command.id,
        outcome: 'ok',
        by: 'a',
        term: 1,
      }),
    ]);
  });

  it('on a store that folds, the board and the history ride on the renewals: after the term starts, job control makes no call of its own', async () => {
    store = new CountingStore({ clock }, true);
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    await a.runner.invoke(report.site, report.method, undefined, []);
    // The term's own calls: the board read at election, the run history's one read in the term.
    await clock.advance(timings.renewIntervalMs + 10);
    const reads = store.counts.readRecord;
    expect(reads).toBe(1);
    expect((await history('report'))[0]).toMatchObject({ outcome: 'ok', by: 'a', term: 1 });
    const renewals = store.renewWithCalls;
    for (let i = 0; i < 10; i++) a.runner.invoke(report.site, report.method, undefined, []);
    // Another replica pauses the job (its own read and write): the leader learns it from a renewal.
    await updateJobBoard(store, 'jobs', (board) => pauseJob(board, 'report', { by: 'b', at: 5 }), never);
    const readsAfterPause = store.counts.readRecord;
    const writeRecords = store.counts.writeRecord;
    await within('paused', timings.renewIntervalMs + 50, () => a.runtime.status().jobs?.paused?.length === 1);
    await clock.advance(timings.renewIntervalMs + 10);
    expect(await history('report')).toHaveLength(11);
    expect(store.renewWithCalls).toBeGreaterThan(renewals);
    expect(store.counts.readRecord).toBe(readsAfterPause);
    expect(store.counts.writeRecord).toBe(writeRecords);
    expect(store.counts.writeState.get(jobHistoryKey('report')) ?? 0).toBe(0);
  });

  it('a renewal carries at most 16 job histories; the others follow at the next ones, none lost', async () => {
    store = new CountingStore({ clock }, true);
    const a = replica('a');
    const many = Array.from({ length: 40 }, (_, i) => job(`job-${i}`));
    for (const each of many) a.runtime.jobs.register(each.definition);
    await a.runtime.start(undefined);
    for (const each of many) await a.runner.invoke(each.site, each.method, undefined, []);
    await clock.advance(4 * timings.renewIntervalMs + 10);
    expect(Math.max(...store.carried)).toBe(MAX_HISTORIES_PER_RENEWAL);
    expect(store.carried.reduce((sum, n) => sum + n, 0)).toBe(40);
    for (const each of many) expect(await history(each.definition.name)).toHaveLength(1);
  });

  it('a renewal that carried run records and failed loses none: the next one carries them again', async () => {
    store = new CountingStore({ clock }, true);
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    await a.runner.invoke(report.site, report.method, undefined, []);
    await clock.advance(timings.renewIntervalMs + 10);
    expect(await history('report')).toHaveLength(1);
    for (let i = 0; i < 3; i++) a.runner.invoke(report.site, report.method, undefined, []);
    store.failCarryingRenewals = 2;
    await clock.advance(2 * timings.renewIntervalMs + 10);
    expect(store.failCarryingRenewals).toBe(0);
    expect(a.runtime.isLeader()).toBe(true);
    expect(await history('report')).toHaveLength(1);
    await clock.advance(timings.renewIntervalMs + 10);
    expect(await history('report')).toHaveLength(4);
  });

  it('a store that neither folds nor reads every renewal (Azure): the run records go with the reads, every 4th renewal', async () => {
    Object.defineProperty(store, 'readEveryNthRenewal', { value: 4 });
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    const key = jobHistoryKey('report');
    for (let i = 0; i < 12; i++) {
      a.runner.invoke(report.site, report.method, undefined, []);
      await clock.advance(timings.renewIntervalMs);
    }
    // Renewals 1, 5 and 9 of the term are its read turns: three writes of the history, not twelve.
    expect(store.counts.writeState.get(key)).toBe(3);
    expect(store.counts.readRecord).toBe(1 + 3);
    await clock.advance(4 * timings.renewIntervalMs);
    expect(await history('report')).toHaveLength(12);
  });

  it('history: runs between two renewals cost one write; the finish replaces the start; errors are cut', async () => {
    const a = replica('a');
    let fail = false;
    const report = job('report', () => {
      if (fail) throw new Error(`broken ${'x'.repeat(500)}`);
      return 'done';
    });
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    await a.runner.invoke(report.site, report.method, undefined, []);
    await clock.advance(timings.renewIntervalMs + 10);
    const key = jobHistoryKey('report');
    const writes = store.counts.writeState.get(key) ?? 0;
    expect(writes).toBe(1);
    for (let i = 0; i < 9; i++) a.runner.invoke(report.site, report.method, undefined, []);
    fail = true;
    expect(() => a.runner.invoke(report.site, report.method, undefined, [])).toThrow(/broken/);
    await clock.advance(timings.renewIntervalMs + 10);
    expect(store.counts.writeState.get(key)).toBe(writes + 1);
    const runs = await history('report');
    expect(runs).toHaveLength(11);
    expect(runs.every((run) => run.outcome !== 'running' && run.by === 'a' && run.term === 1)).toBe(true);
    // Ten runs in one millisecond of the fake clock are ten records, a millisecond apart.
    expect(new Set(runs.map((run) => run.startedAt)).size).toBe(11);
    expect(runs[0]).toMatchObject({ outcome: 'error', trigger: 'schedule' });
    expect(runs[0]?.error).toHaveLength(200);
    // Nothing new: no write at the next renewal.
    await clock.advance(timings.renewIntervalMs + 10);
    expect(store.counts.writeState.get(key)).toBe(writes + 1);
  });

  it('a run still going at a renewal is recorded as running, then finished; a shutdown writes the last records before it releases', async () => {
    const a = replica('a');
    let finish!: () => void;
    const report = job('report', () => new Promise<void>((resolve) => (finish = resolve)));
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    const running = a.runner.invoke(report.site, report.method, undefined, []) as Promise<unknown>;
    await within('started', 100, () => report.runs.length === 1);
    await clock.advance(timings.renewIntervalMs + 10);
    expect((await history('report'))[0]).toMatchObject({ outcome: 'running' });
    finish();
    await running;
    // The shutdown's drain is over at once; the finish is written before the release.
    const stopping = a.runtime.stop();
    while (a.runtime.status().state !== 'stopped') await clock.advance(10);
    await stopping;
    const [last] = await history('report');
    expect(last).toMatchObject({ outcome: 'ok', by: 'a', term: 1 });
    expect(last?.durationMs).toBeGreaterThanOrEqual(timings.renewIntervalMs);
  });

  it('an honoured handover writes the runs that ended during its drain before it releases', async () => {
    const a = replica('a');
    let finish!: () => void;
    const report = job('report', () => new Promise<void>((resolve) => (finish = resolve)));
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    const running = a.runner.invoke(report.site, report.method, undefined, []) as Promise<unknown>;
    await within('started', 100, () => report.runs.length === 1);
    await a.runtime.requestHandover();
    await within('draining', timings.renewIntervalMs + 50, () => a.runtime.isSteppingDown);
    await clock.advance(50);
    expect(a.runtime.status().term).toBe(1);
    finish();
    await running;
    await within('released', timings.renewIntervalMs, () => a.runtime.status().term === null);
    const [last] = await history('report');
    expect(last).toMatchObject({ outcome: 'ok', by: 'a', term: 1 });
  });

  it('a claim that failed is retried at the next renewal; a command claimed as the term ends is given back, and the next leader runs it once', async () => {
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    await a.runner.invoke(report.site, report.method, undefined, []);
    await runNowCommand(store, 'jobs', { job: 'report', by: 'b' }, never);
    store.failRecordWrites = 1;
    await within('ran after a retry', 2 * timings.renewIntervalMs + 50, () => report.runs.length === 2);
    expect(
      logs.matching('warn', /could not claim the run-now commands on the job board \(write timed out\)/),
    ).toHaveLength(1);

    // The claim lands, its reply is late, the term ends meanwhile (a resignation, as a handover's
    // drain would): it must not run in the ended term, and it is not lost either: given back to the
    // board for the next leader (it never ran, so at most once still holds).
    let reply!: () => void;
    store.replyHeld = new Promise<void>((resolve) => (reply = resolve));
    const queue = async (by: string) => {
      const held = store.replyHeld;
      store.replyHeld = undefined;
      const queued = await runNowCommand(store, 'jobs', { job: 'report', by }, never);
      store.replyHeld = held;
      return queued;
    };
    const command = await queue('b');
    const writes = store.counts.writeRecord;
    await within('claimed', timings.renewIntervalMs + 50, () => store.counts.writeRecord > writes);
    expect((await readJobBoard(store, 'jobs', never)).board.runNow).toEqual([]);
    await a.runtime.resign();
    // Queued while the claim was out: the given-back command goes before it, as it was asked first.
    const later = await queue('c');
    store.replyHeld = undefined;
    reply();
    const back = new RegExp(
      `run-now command ${command.id} of job "report" \\(asked by b\\) was claimed but the term ended before it could run; it is back on the job board for the next leader`,
    );
    await within('given back', timings.renewIntervalMs, () => logs.matching('log', back).length === 1);
    expect(report.runs).toHaveLength(2);
    expect((await readJobBoard(store, 'jobs', never)).board.runNow.map((c) => c.id)).toEqual([command.id, later.id]);
    expect(logs.matching('warn', /could not be put back/)).toEqual([]);

    // The next leader claims both and runs each once; nothing is left on the board.
    await a.runtime.stop();
    const b = replica('b');
    b.runtime.jobs.register(report.definition);
    await b.runtime.start(undefined);
    await within('b ran both', 2 * timings.leaseDurationMs, () => report.runs.length === 4);
    await clock.advance(2 * timings.renewIntervalMs);
    expect(report.runs).toHaveLength(4);
    expect((await readJobBoard(store, 'jobs', never)).board.runNow).toEqual([]);
    const ids = (await history('report')).filter((run) => run.trigger === 'run-now').map((run) => run.commandId);
    expect(ids.filter((id) => id === command.id)).toHaveLength(1);
  });

  it('a claimed command the board cannot take back (its queue filled meanwhile) is dropped with a warning, never run', async () => {
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    await a.runner.invoke(report.site, report.method, undefined, []);
    let reply!: () => void;
    store.replyHeld = new Promise<void>((resolve) => (reply = resolve));
    const held = store.replyHeld;
    store.replyHeld = undefined;
    const command = await runNowCommand(store, 'jobs', { job: 'report', by: 'b' }, never);
    store.replyHeld = held;
    const writes = store.counts.writeRecord;
    await within('claimed', timings.renewIntervalMs + 50, () => store.counts.writeRecord > writes);
    await a.runtime.resign();
    store.replyHeld = undefined;
    // Operators fill the queue while the claim's reply is out.
    for (let i = 0; i < MAX_RUN_NOW_QUEUE; i++) await runNowCommand(store, 'jobs', { job: 'other', by: 'c' }, never);
    reply();
    const dropped = new RegExp(
      `run-now command ${command.id} of job "report" \\(asked by b\\) was claimed but the term ended before it could run, and could not be put back on the job board \\(its run-now queue already holds 100 commands\\)`,
    );
    await within('dropped', timings.renewIntervalMs, () => logs.matching('warn', dropped).length === 1);
    expect(report.runs).toHaveLength(1);
    expect((await readJobBoard(store, 'jobs', never)).board.runNow.some((c) => c.id === command.id)).toBe(false);
  });

  it('once per tick: a paused tick is recorded as handled (not lost, never caught up); a run now leaves the tick ledger alone', async () => {
    const a = replica('a');
    const runs: number[] = [];
    const method = () => void runs.push(clock.wallNow());
    const cron = { cronTime: '*/10 * * * * *', name: 'ledger.tick' };
    const tick = { label: 'Jobs.tick', missed: 'skip' as const, cron: () => cron };
    const definition: JobDefinition = {
      name: 'ledger.tick',
      label: 'Jobs.tick',
      schedule: { kind: 'cron', cron },
      onceTick: true,
      method,
      invoke: method,
      owner: 'Jobs.tick (Jobs)',
    };
    const site = leaderOnlySite({
      label: 'Jobs.tick',
      election: undefined,
      isAsync: false,
      tick,
      isRoute: () => false,
    });
    a.ticks.register(a.runtime, tick, cron, definition.owner, method);
    a.runtime.jobs.register(definition);
    await a.runtime.start(undefined);
    const tickKey = 'tick:ledger.tick';
    const recorded = async () => (await store.readState('jobs', { signal: never, key: tickKey }))?.value;
    // On the fire time, as the scheduler calls it.
    const fire = async () => {
      const next = Math.ceil((clock.wallNow() + 1) / 10_000) * 10_000;
      await clock.advance(next - clock.wallNow());
      await a.runner.invoke(site, method, undefined, []);
    };
    await fire();
    expect(runs).toHaveLength(1);
    const first = await recorded();
    await updateJobBoard(store, 'jobs', (board) => pauseJob(board, 'ledger.tick', { by: 'b', at: 5 }), never);
    await clock.advance(timings.renewIntervalMs + 10);
    await fire();
    expect(runs).toHaveLength(1);
    const paused = (await recorded()) as number;
    expect(paused).toBe((first as number) + 10_000);
    // Run now: a manual run, in the history, not a tick.
    await runNowCommand(store, 'jobs', { job: 'ledger.tick', by: 'b' }, never);
    await within('ran now', timings.renewIntervalMs + 50, () => runs.length === 2);
    expect(await recorded()).toBe(paused);
    await clock.advance(timings.renewIntervalMs + 10);
    const [manual, scheduled] = await history('ledger.tick');
    expect(manual).toMatchObject({ trigger: 'run-now', outcome: 'ok' });
    expect(manual?.tick).toBeUndefined();
    expect(scheduled).toMatchObject({ trigger: 'schedule', tick: first, outcome: 'ok' });
    // Resumed: the next tick runs, and none of the paused ones counts as lost.
    await updateJobBoard(store, 'jobs', (board) => ({ ...board, paused: {} }), never);
    await clock.advance(timings.renewIntervalMs + 10);
    await fire();
    expect(runs).toHaveLength(3);
    expect(logs.matching('warn', /ran on no replica/)).toEqual([]);
  });

  it("missed: 'catch-up': a new leader does not catch up a paused job's missed tick (it learns the pause first)", async () => {
    const runs: string[] = [];
    const cron = { cronTime: '*/10 * * * * *', name: 'ledger.catchup' };
    const tick = { label: 'Jobs.catchUp', missed: 'catch-up' as const, cron: () => cron };
    const replicas = ['a', 'b'].map((identity) => {
      const r = replica(identity);
      const method = () => void runs.push(identity);
      const definition: JobDefinition = {
        name: 'ledger.catchup',
        label: 'Jobs.catchUp',
        schedule: { kind: 'cron', cron },
        onceTick: true,
        method,
        invoke: method,
        owner: 'Jobs.catchUp (Jobs)',
      };
      r.ticks.register(r.runtime, tick, cron, definition.owner, method);
      r.runtime.jobs.register(definition);
      r.ticks.start();
      const site = leaderOnlySite({
        label: 'Jobs.catchUp',
        election: undefined,
        isAsync: false,
        tick,
        isRoute: () => false,
      });
      return { ...r, site, method };
    });
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    await a.runtime.start(undefined);
    await clock.advance(Math.ceil((clock.wallNow() + 1) / 10_000) * 10_000 - clock.wallNow());
    await a.runner.invoke(a.site, a.method, undefined, []);
    expect(runs).toEqual(['a']);
    await updateJobBoard(store, 'jobs', (board) => pauseJob(board, 'ledger.catchup', { by: 'ops', at: 5 }), never);
    await within('paused', timings.renewIntervalMs + 50, () => a.runtime.status().jobs?.paused?.length === 1);
    const stopping = a.runtime.stop();
    while (a.runtime.status().state !== 'stopped') await clock.advance(10);
    await stopping;
    // A fire time passes with nobody leading: missed, and the job paused.
    await clock.advance(10_000);
    await b.runtime.start(undefined);
    await within('b leads', 100, () => b.runtime.isLeader());
    await clock.advance(100);
    expect(runs).toEqual(['a']);
    expect(logs.matching('log', /ledger.catchup: no catch-up after election: the job is paused/)).toHaveLength(1);
  });

  it('metrics: each job counts its skips by reason, from 0 at startup', async () => {
    class Reader extends MetricReader {
      constructor() {
        super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
      }
      protected async onForceFlush(): Promise<void> {}
      protected async onShutdown(): Promise<void> {}
    }
    const reader = new Reader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('test');
    const skips = async () => {
      const { resourceMetrics } = await reader.collect();
      const metric = resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .find((m) => m.descriptor.name === 'leader_election_job_skipped');
      return Object.fromEntries(
        (metric?.dataPoints ?? []).map((point) => [
          `${point.attributes.handler}/${point.attributes.reason}`,
          point.value,
        ]),
      );
    };
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(meter);
    expect(await skips()).toEqual({ 'Jobs.report/paused': 0, 'Jobs.report/board_unread': 0 });
    await updateJobBoard(store, 'jobs', (board) => pauseJob(board, 'report', { by: 'b', at: 5 }), never);
    await within('paused', timings.renewIntervalMs + 50, () => a.runtime.status().jobs?.paused?.length === 1);
    for (let i = 0; i < 3; i++) a.runner.invoke(report.site, report.method, undefined, []);
    expect(await skips()).toEqual({ 'Jobs.report/paused': 3, 'Jobs.report/board_unread': 0 });
  });

  it("the service's commands are dated by the module's clock (here the fake one), not the process's", async () => {
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    await a.runtime.start(undefined);
    const registry = new ElectionRegistry();
    registry.add('jobs', a.runtime);
    const operations = new JobOperations(registry, clock);
    await clock.advance(1_234);
    const at = clock.wallNow();
    expect(Math.abs(at - Date.now())).toBeGreaterThan(1_000_000);
    await operations.pauseJob('report', { reason: 'test' });
    const id = await operations.runJobNow('report', { by: 'ops' });
    const { board } = await readJobBoard(store, 'jobs', never);
    expect(board.paused.report).toMatchObject({ by: 'a', at, reason: 'test' });
    expect(board.runNow.find((command) => command.id === id)).toMatchObject({ by: 'ops', at });
  });

  it('the catalogue is published once per term; a second job of one name fails startup', async () => {
    const a = replica('a');
    const report = job('report');
    a.runtime.jobs.register(report.definition);
    a.runtime.jobs.register({ ...report.definition });
    expect(() => a.runtime.jobs.register({ ...job('report').definition, owner: 'Other.report (Other)' })).toThrow(
      /two scheduled @LeaderOnly jobs of election "jobs" are named "report" \(Jobs.report \(Jobs\) and Other.report \(Other\)\)/,
    );
    await a.runtime.start(undefined);
    await clock.advance(3 * timings.renewIntervalMs);
    expect(store.counts.writeState.get(JOB_CATALOGUE_KEY)).toBe(1);
    const catalogue = await store.readState('jobs', { signal: never, key: JOB_CATALOGUE_KEY });
    expect(catalogue?.value).toEqual({ v: 1, by: 'a', jobs: [{ name: 'report', schedule: 'interval 100 ms' }] });
  });
});
