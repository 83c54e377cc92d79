// Issue 28: what the leader records about its jobs (run history, catalogue) in leader state — the
// merge rules, the error text a run keeps, the keys, decoding, and reading them back from a store.
import {
  decodeJobHistory,
  encodeJobCatalogue,
  encodeJobHistory,
  historyOrFresh,
  JOB_CATALOGUE_KEY,
  JOB_HISTORY_LIMIT,
  type JobRun,
  jobHistoryKey,
  mergeJobRun,
  readJobCatalogue,
  readJobHistory,
  runErrorText,
} from '../../lib/election/job-history.js';
import { checkUserStateKey, escapedStateKey } from '../../lib/election/state-keys.js';
import { tickKey } from '../../lib/leadership/tick.job.js';
import { FatalLeaseStoreError } from '../../lib/shared/errors.js';
import type { Lease, LeaseStore } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';

const signal = () => AbortSignal.timeout(5_000);
const T = Date.UTC(2026, 10, 23, 10, 0, 0);

function run(startedAt: number, extra: Partial<JobRun> = {}): JobRun {
  return { job: 'Reports.nightly', startedAt, outcome: 'running', by: 'pod-a', term: 3, trigger: 'schedule', ...extra };
}

async function lead(store: InMemoryLeaseStore, election: string): Promise<Lease> {
  const result = await store.acquire({ election, identity: 'pod-a', leaseDurationMs: 60_000, signal: signal() });
  if (!result.acquired) throw new Error('not acquired');
  return result.lease;
}

describe('run history (pure)', () => {
  it('puts a new run first and replaces the start record of a run when it finishes', () => {
    const started = mergeJobRun(
      [run(T - 60_000, { outcome: 'ok', finishedAt: T - 59_000, durationMs: 1_000 })],
      run(T),
    );
    expect(started.map((r) => [r.startedAt, r.outcome])).toEqual([
      [T, 'running'],
      [T - 60_000, 'ok'],
    ]);
    const finished = mergeJobRun(
      started,
      run(T, { outcome: 'error', finishedAt: T + 5, durationMs: 5, error: 'boom' }),
    );
    expect(finished).toHaveLength(2);
    expect(finished[0]).toEqual(run(T, { outcome: 'error', finishedAt: T + 5, durationMs: 5, error: 'boom' }));
    // Another run started the same millisecond (another term, or a run-now) is another run.
    const other = mergeJobRun(finished, run(T, { trigger: 'run-now', commandId: 'c1' }));
    expect(other.map((r) => r.trigger)).toEqual(['run-now', 'schedule', 'schedule']);
    expect(started).toHaveLength(2);
  });

  it(`keeps the ${JOB_HISTORY_LIMIT} newest, newest first, whatever order they are recorded in`, () => {
    let runs: JobRun[] = [];
    const starts = Array.from({ length: 30 }, (_, i) => T + ((i * 7) % 30) * 1_000);
    for (const start of starts) runs = mergeJobRun(runs, run(start));
    expect(runs).toHaveLength(JOB_HISTORY_LIMIT);
    expect(runs.map((r) => r.startedAt)).toEqual(Array.from({ length: 20 }, (_, i) => T + (29 - i) * 1_000));
  });

  it('keeps at most 200 characters of an error, without control characters or half a surrogate pair', () => {
    expect(runErrorText(new Error('line 1\nline 2\u0000'))).toBe('line 1 line 2 ');
    const emoji = `${'x'.repeat(199)}😀 and more`;
    expect(runErrorText(new Error(emoji))).toBe('x'.repeat(199));
    expect(runErrorText(new Error('lone \ud800 surrogate'))).toBe('lone \ufffd surrogate');
    expect(runErrorText('a string')).toBe('a string');
    expect(runErrorText(new TypeError(''))).toBe('TypeError');
    expect(mergeJobRun([], run(T, { outcome: 'error', error: 'e'.repeat(500) }))[0].error).toHaveLength(200);
  });

  it('decodes what it encodes; reports a damaged history, which the leader replaces by a fresh one', () => {
    const runs = [run(T)];
    expect(decodeJobHistory('billing', 'a', JSON.parse(JSON.stringify(encodeJobHistory(runs))))).toEqual(runs);
    expect(decodeJobHistory('billing', 'a', undefined)).toEqual([]);
    for (const damaged of [[], { v: 2, runs }, { v: 1, runs: [{ ...run(T), outcome: 'maybe' }] }, { v: 1 }]) {
      expect(() => decodeJobHistory('billing', 'a', damaged)).toThrow(FatalLeaseStoreError);
      expect(() => decodeJobHistory('billing', 'a', damaged)).toThrow(
        /the run history of job "a" in election "billing" is not one this library wrote/,
      );
    }
    const reported: string[] = [];
    expect(historyOrFresh('billing', 'a', { v: 1, runs: 'x' }, (e) => reported.push(e.message))).toEqual([]);
    expect(historyOrFresh('billing', 'a', encodeJobHistory(runs), (e) => reported.push(e.message))).toEqual(runs);
    expect(reported).toHaveLength(1);
  });
});

describe('job state keys', () => {
  it('escapes a job name into the state key alphabet, unique and at most 200 characters', () => {
    expect(jobHistoryKey('Reports.nightly')).toBe('jobs:history:Reports.nightly');
    expect(jobHistoryKey('close books/eu')).toBe('jobs:history:close_20books_2feu');
    expect(jobHistoryKey('a_b')).toBe('jobs:history:a_5fb');
    expect(jobHistoryKey('é')).toBe('jobs:history:_c3_a9');
    const long = jobHistoryKey('j'.repeat(300));
    expect(long).toHaveLength(200);
    expect(long).toMatch(/^[A-Za-z0-9._:-]+$/);
    expect(jobHistoryKey(`${'j'.repeat(299)}k`)).not.toBe(long);
    expect(escapedStateKey('tick:', 'a b')).toBe('tick:a_20b');
  });

  it("escapes as the once-per-tick ledger's keys do (one rule for both)", () => {
    for (const name of ['Reports.nightly', 'a b/c', 'é_ü', 'x'.repeat(195), 'y'.repeat(400), '😀'.repeat(80)]) {
      expect(escapedStateKey('tick:', name)).toBe(tickKey(name));
    }
  });

  it('reserves the jobs: keys (and still the tick: keys) from the public writeState', () => {
    expect(() => checkUserStateKey(JOB_CATALOGUE_KEY)).toThrow(/keys starting with "jobs:" hold the library's job/);
    expect(() => checkUserStateKey(jobHistoryKey('a'))).toThrow(TypeError);
    expect(() => checkUserStateKey('tick:a')).toThrow(/keys starting with "tick:"/);
    expect(() => checkUserStateKey('jobs')).not.toThrow();
    expect(() => checkUserStateKey(undefined)).not.toThrow();
  });
});

describe('reading history and catalogue from a store', () => {
  it("reads what the leader wrote, the catalogue with the writer's term; nothing written: none", async () => {
    const store = new InMemoryLeaseStore();
    expect(await readJobHistory(store, 'billing', 'a', signal())).toEqual([]);
    expect(await readJobCatalogue(store, 'billing', signal())).toBeUndefined();
    const lease = await lead(store, 'billing');
    const jobs = [
      { name: 'a', schedule: 'cron 0 * * * * *', onceTick: true },
      { name: 'b', schedule: 'interval 5000 ms' },
    ];
    await store.writeState(lease, encodeJobCatalogue('pod-a', jobs), { signal: signal(), key: JOB_CATALOGUE_KEY });
    await store.writeState(lease, encodeJobHistory([run(T, { job: 'a' })]), {
      signal: signal(),
      key: jobHistoryKey('a'),
    });
    expect(await readJobCatalogue(store, 'billing', signal())).toEqual({ jobs, by: 'pod-a', term: lease.term });
    expect(await readJobHistory(store, 'billing', 'a', signal())).toEqual([run(T, { job: 'a' })]);
    expect(await readJobHistory(store, 'billing', 'b', signal())).toEqual([]);
  });

  it('reports a damaged catalogue and a store without leader state', async () => {
    const store = new InMemoryLeaseStore();
    const lease = await lead(store, 'billing');
    await store.writeState(
      lease,
      { v: 1, by: 'pod-a', jobs: [{ name: 'a' }] },
      { signal: signal(), key: JOB_CATALOGUE_KEY },
    );
    await expect(readJobCatalogue(store, 'billing', signal())).rejects.toThrow(
      /the job catalogue of election "billing" is not one this library wrote \("jobs" is not a list of jobs\)/,
    );
    const legacy = Object.assign(Object.create(store) as LeaseStore, { readState: undefined });
    await expect(readJobHistory(legacy, 'billing', 'a', signal())).rejects.toThrow(FatalLeaseStoreError);
  });
});
