// Issue 28: the job board (operators' commands in a shared record) — its pure changes, its decoding,
// and the compare-and-set loop every writer goes through, on the in-memory store with racing writers.

import {
  claimRunNowCommands,
  JOB_BOARD_MAX_ATTEMPTS,
  pauseJobCommand,
  readJobBoard,
  resumeJobCommand,
  runNowCommand,
  updateJobBoard,
} from '../../lib/election/job-board.calls.js';
import {
  emptyJobBoard,
  JOB_BOARD_KEY,
  type JobBoard,
  MAX_RUN_NOW_QUEUE,
  pauseJob,
  queueRunNow,
  type RunNowCommand,
  resumeJob,
  returnRunNow,
  takeRunNow,
} from '../../lib/election/job-board.js';
import { FatalLeaseStoreError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import type { LeaseStore, RecordWriteOptions } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';

const signal = () => AbortSignal.timeout(5_000);
const T = Date.UTC(2026, 10, 23, 10, 0, 0);

function command(job: string, id: string): RunNowCommand {
  return { id, job, by: 'pod-a', at: T };
}

/** The store, with `before` run before each writeRecord reaches it (a writer racing ours). */
function racing(
  store: InMemoryLeaseStore,
  before: (attempt: number) => Promise<void>,
): LeaseStore & { writes: number } {
  const wrapped = Object.assign(Object.create(store) as InMemoryLeaseStore, {
    writes: 0,
    async writeRecord(election: string, key: string, value: unknown, options: RecordWriteOptions) {
      wrapped.writes += 1;
      await before(wrapped.writes);
      return store.writeRecord(election, key, value, options);
    },
  });
  return wrapped;
}

describe('job board changes (pure)', () => {
  it('pauses, keeps the first pause for the same reason, replaces it for another, resumes once', () => {
    const paused = pauseJob(emptyJobBoard(), 'Reports.nightly', {
      reason: 'incident 42',
      by: 'ops',
      at: T,
    }) as JobBoard;
    expect(paused.paused).toEqual({ 'Reports.nightly': { reason: 'incident 42', by: 'ops', at: T } });
    expect(pauseJob(paused, 'Reports.nightly', { reason: 'incident 42', by: 'other', at: T + 1 })).toBeUndefined();
    const again = pauseJob(paused, 'Reports.nightly', { reason: 'incident 43', by: 'other', at: T + 1 }) as JobBoard;
    expect(again.paused['Reports.nightly']).toEqual({ reason: 'incident 43', by: 'other', at: T + 1 });
    const resumed = resumeJob(again, 'Reports.nightly', { by: 'ops', at: T + 2 }) as JobBoard;
    expect(resumed.paused).toEqual({});
    expect(resumed.resumed).toEqual({ 'Reports.nightly': { by: 'ops', at: T + 2 } });
    expect(resumeJob(resumed, 'Reports.nightly', { by: 'ops', at: T + 3 })).toBeUndefined();
    // A new pause clears the resume record of that job.
    expect(pauseJob(resumed, 'Reports.nightly', { by: 'ops', at: T + 4 })?.resumed).toEqual({});
    // Never changes its input.
    expect(paused.paused['Reports.nightly'].reason).toBe('incident 42');
  });

  it("treats names of Object.prototype's members as any other job", () => {
    for (const job of ['constructor', 'toString', '__proto__']) {
      const paused = pauseJob(emptyJobBoard(), job, { by: 'ops', at: T }) as JobBoard;
      expect(Object.hasOwn(paused.paused, job)).toBe(true);
      expect(JSON.parse(JSON.stringify(paused)).paused).toHaveProperty([job], { by: 'ops', at: T });
      expect(resumeJob(emptyJobBoard(), job, { by: 'ops', at: T })).toBeUndefined();
      expect(Object.keys((resumeJob(paused, job, { by: 'ops', at: T }) as JobBoard).paused)).toEqual([]);
    }
  });

  it.each([
    ['job', () => pauseJob(emptyJobBoard(), '', { by: 'ops', at: T }), /job must be a non-empty name of at most 500/],
    ['job', () => pauseJob(emptyJobBoard(), 'x'.repeat(501), { by: 'ops', at: T }), /\(501 characters\)/],
    ['by', () => pauseJob(emptyJobBoard(), 'a', { by: ' ', at: T }), /by must be a non-empty text of at most 300/],
    ['by', () => resumeJob(emptyJobBoard(), 'a', { by: 'a\u0000b', at: T }), /by must be/],
    ['at', () => pauseJob(emptyJobBoard(), 'a', { by: 'ops', at: Number.NaN }), /at must be epoch milliseconds/],
    ['reason', () => pauseJob(emptyJobBoard(), 'a', { by: 'ops', at: T, reason: 'r'.repeat(501) }), /reason must be/],
    ['id', () => queueRunNow(emptyJobBoard(), { ...command('a', ''), id: '' }), /id must be a non-empty text/],
  ])('refuses a bad %s with a TypeError naming it', (_field, change, message) => {
    expect(change).toThrow(TypeError);
    expect(change).toThrow(message);
  });

  it(`queues run-now commands oldest first and refuses the ${MAX_RUN_NOW_QUEUE + 1}th`, () => {
    let board = emptyJobBoard();
    for (let i = 0; i < MAX_RUN_NOW_QUEUE; i += 1) board = queueRunNow(board, command('a', `c${i}`));
    expect(board.runNow.map((c) => c.id).slice(0, 2)).toEqual(['c0', 'c1']);
    expect(() => queueRunNow(board, command('a', 'one-more'))).toThrow(RangeError);
    expect(() => queueRunNow(board, command('a', 'one-more'))).toThrow(/already holds 100 run-now commands/);
  });

  it("takes the commands the leader accepts and leaves other jobs' for a leader that knows them", () => {
    const board = [command('a', '1'), command('b', '2'), command('a', '3')].reduce(queueRunNow, emptyJobBoard());
    const { board: next, claimed } = takeRunNow(board, (c) => c.job === 'a');
    expect(claimed.map((c) => c.id)).toEqual(['1', '3']);
    expect(next?.runNow.map((c) => c.id)).toEqual(['2']);
    expect(takeRunNow(board, () => false)).toEqual({ board: undefined, claimed: [] });
  });

  it('gives claimed commands back at the head of the queue, once, as far as the queue has room', () => {
    const board = [command('a', '1'), command('b', '2'), command('a', '3')].reduce(queueRunNow, emptyJobBoard());
    const { board: claimedFrom, claimed } = takeRunNow(board, (c) => c.job === 'a');
    const later = queueRunNow(claimedFrom as JobBoard, command('a', '4'));
    const { board: back, returned, left } = returnRunNow(later, claimed);
    expect(back?.runNow.map((c) => c.id)).toEqual(['1', '3', '2', '4']);
    expect(returned.map((c) => c.id)).toEqual(['1', '3']);
    expect(left).toEqual([]);
    // Given back twice (a resend): not doubled, nothing to write.
    expect(returnRunNow(back as JobBoard, claimed)).toEqual({ board: undefined, returned: [], left: [] });
    // A queue with room for one: the oldest goes back, the other is left out (dropped, with a warning).
    let full = emptyJobBoard();
    for (let i = 0; i < MAX_RUN_NOW_QUEUE - 1; i += 1) full = queueRunNow(full, command('b', `c${i}`));
    const partial = returnRunNow(full, claimed);
    expect(partial.board?.runNow).toHaveLength(MAX_RUN_NOW_QUEUE);
    expect(partial.board?.runNow[0]?.id).toBe('1');
    expect(partial.left.map((c) => c.id)).toEqual(['3']);
  });
});

describe('job board records', () => {
  it('reads an absent board as empty with version null, and a written one with its version', async () => {
    const store = new InMemoryLeaseStore();
    expect(await readJobBoard(store, 'billing', signal())).toEqual({ board: emptyJobBoard(), version: null });
    await pauseJobCommand(store, 'billing', { job: 'a', by: 'ops', at: T, reason: 'why' }, signal());
    const { board, version } = await readJobBoard(store, 'billing', signal());
    expect(board.paused).toEqual({ a: { reason: 'why', by: 'ops', at: T } });
    expect(typeof version).toBe('string');
    // Only the record: no lease was created or changed.
    expect(await store.read('billing', { signal: signal() })).toMatchObject({ held: false, term: 0 });
  });

  it.each([
    ['not an object', 'paused'],
    ['version 7?', { v: '1', paused: {}, runNow: [] }],
    ['"paused" is not a map of pauses', { v: 1, paused: { a: { by: 1 } }, runNow: [] }],
    ['"runNow" is not a list of commands', { v: 1, paused: {}, runNow: [{ id: 'x' }] }],
  ])('reports a damaged board (%s) as a FatalLeaseStoreError and never writes over it', async (_why, value) => {
    const store = new InMemoryLeaseStore();
    await store.writeRecord('billing', JOB_BOARD_KEY, value, { signal: signal(), ifVersion: null });
    await expect(readJobBoard(store, 'billing', signal())).rejects.toThrow(FatalLeaseStoreError);
    await expect(readJobBoard(store, 'billing', signal())).rejects.toThrow(
      /the job board of election "billing" \(shared record "jobs"\) is not one this library wrote/,
    );
    await expect(runNowCommand(store, 'billing', { job: 'a', by: 'ops' }, signal())).rejects.toThrow(
      FatalLeaseStoreError,
    );
    expect((await store.readRecord('billing', JOB_BOARD_KEY, { signal: signal() }))?.value).toEqual(value);
  });

  it("neither reads nor changes a newer version's board; keeps unknown fields of its own version", async () => {
    const store = new InMemoryLeaseStore();
    await store.writeRecord(
      'newer',
      JOB_BOARD_KEY,
      { v: 2, paused: {}, runNow: [] },
      { signal: signal(), ifVersion: null },
    );
    await expect(resumeJobCommand(store, 'newer', { job: 'a', by: 'ops' }, signal())).rejects.toThrow(
      /written by a newer version of @leaderlease\/nestjs \(board version 2\)/,
    );
    const extra = { v: 1, paused: {}, runNow: [], windows: { a: 'night' } };
    await store.writeRecord('same', JOB_BOARD_KEY, extra, { signal: signal(), ifVersion: null });
    await runNowCommand(store, 'same', { job: 'a', by: 'ops', id: 'c1', at: T }, signal());
    expect((await store.readRecord('same', JOB_BOARD_KEY, { signal: signal() }))?.value).toEqual({
      ...extra,
      runNow: [{ id: 'c1', job: 'a', by: 'ops', at: T }],
    });
  });

  it('writes nothing when the change is none', async () => {
    const store = racing(new InMemoryLeaseStore(), async () => undefined);
    await resumeJobCommand(store, 'billing', { job: 'a', by: 'ops' }, signal());
    expect(await updateJobBoard(store, 'billing', () => undefined, signal())).toEqual(emptyJobBoard());
    expect(store.writes).toBe(0);
  });

  it('re-reads and re-applies when another writer came first, losing neither command', async () => {
    const base = new InMemoryLeaseStore();
    // Before our first write lands, an operator pauses another job.
    const store = racing(base, async (attempt) => {
      if (attempt === 1) await pauseJobCommand(base, 'billing', { job: 'b', by: 'other', at: T }, signal());
    });
    const queued = await runNowCommand(store, 'billing', { job: 'a', by: 'ops', at: T }, signal());
    expect(store.writes).toBe(2);
    const { board } = await readJobBoard(base, 'billing', signal());
    expect(board.paused).toHaveProperty('b');
    expect(board.runNow).toEqual([queued]);
    expect(queued.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('queues a run-now once when its write landed but was answered "condition failed" (a resend)', async () => {
    // Found by the simulation (#28): a driver resent the write after it applied; the copy's condition
    // failed, the loop re-read and queued the same command again, and the leader ran it twice.
    const base = new InMemoryLeaseStore();
    const resending = Object.assign(Object.create(base) as InMemoryLeaseStore, {
      async writeRecord(election: string, key: string, value: unknown, options: RecordWriteOptions) {
        await base.writeRecord(election, key, value, options);
        return base.writeRecord(election, key, value, options);
      },
    });
    const queued = await runNowCommand(resending, 'billing', { job: 'a', by: 'ops', at: T }, signal());
    const { board } = await readJobBoard(base, 'billing', signal());
    expect(board.runNow).toEqual([queued]);
    expect(queueRunNow(board, queued)).toBe(board);
    const full = Array.from({ length: MAX_RUN_NOW_QUEUE }, (_, i) => command('a', `c${i}`)).reduce(
      queueRunNow,
      emptyJobBoard(),
    );
    expect(queueRunNow(full, command('a', 'c7'))).toBe(full);
  });

  it('concurrent writers: every command recorded once', async () => {
    const store = new InMemoryLeaseStore();
    const jobs = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const results = await Promise.all([
      ...jobs.map((job) => runNowCommand(store, 'billing', { job, by: `pod-${job}` }, signal())),
      ...jobs.map((job) => pauseJobCommand(store, 'billing', { job, by: 'ops' }, signal())),
    ]);
    const { board } = await readJobBoard(store, 'billing', signal());
    expect(board.runNow.map((c) => c.job).sort()).toEqual(jobs);
    expect(board.runNow.map((c) => c.id).sort()).toEqual(
      (results.slice(0, jobs.length) as RunNowCommand[]).map((c) => c.id).sort(),
    );
    expect(Object.keys(board.paused).sort()).toEqual(jobs);
  });

  it(`gives up after ${JOB_BOARD_MAX_ATTEMPTS} lost races with a TransientLeaseStoreError`, async () => {
    const base = new InMemoryLeaseStore();
    let n = 0;
    const store = racing(base, async () => {
      n += 1;
      await runNowCommand(base, 'billing', { job: 'other', by: 'racer', id: `r${n}` }, signal());
    });
    const attempt = runNowCommand(store, 'billing', { job: 'a', by: 'ops' }, signal());
    await expect(attempt).rejects.toThrow(TransientLeaseStoreError);
    await expect(attempt).rejects.toThrow(/changed under every one of 10 attempts/);
    expect(store.writes).toBe(JOB_BOARD_MAX_ATTEMPTS);
    expect((await readJobBoard(base, 'billing', signal())).board.runNow.every((c) => c.job === 'other')).toBe(true);
  });

  it('stops at the signal: an aborted loop rejects with a TransientLeaseStoreError', async () => {
    const base = new InMemoryLeaseStore();
    const controller = new AbortController();
    const store = racing(base, async (attempt) => {
      await runNowCommand(base, 'billing', { job: 'other', by: 'racer', id: `r${attempt}` }, signal());
      if (attempt === 2) controller.abort(new Error('operator gave up'));
    });
    await expect(runNowCommand(store, 'billing', { job: 'a', by: 'ops' }, controller.signal)).rejects.toThrow(
      TransientLeaseStoreError,
    );
    expect(store.writes).toBe(2);
  });

  it('claims each run-now command exactly once across four racing claims (leaders of overlapping terms)', async () => {
    const store = new InMemoryLeaseStore();
    const ids = Array.from({ length: 12 }, (_, i) => `c${i}`);
    for (const id of ids) await runNowCommand(store, 'billing', { job: 'a', by: 'ops', id }, signal());
    await runNowCommand(store, 'billing', { job: 'unknown-here', by: 'ops', id: 'x' }, signal());
    const claims = await Promise.all(
      [0, 1, 2, 3].map(() => claimRunNowCommands(store, 'billing', (c) => c.job === 'a', signal())),
    );
    expect(
      claims
        .flat()
        .map((c) => c.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect((await readJobBoard(store, 'billing', signal())).board.runNow.map((c) => c.id)).toEqual(['x']);
    expect(await claimRunNowCommands(store, 'billing', (c) => c.job === 'a', signal())).toEqual([]);
  });

  it('refuses a store without shared records with a FatalLeaseStoreError naming it', async () => {
    const store = new InMemoryLeaseStore();
    const legacy = Object.assign(Object.create(store) as LeaseStore, { readRecord: undefined, writeRecord: undefined });
    await expect(readJobBoard(legacy, 'billing', signal())).rejects.toThrow(
      /InMemoryLeaseStore does not support shared records \(it implements no readRecord\/writeRecord\)/,
    );
  });
});
