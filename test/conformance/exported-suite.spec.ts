// The conformance suite as store authors get it (`leaseStoreConformance` of
// `@leaderlease/nestjs/store`): under node:test against the built package it passes for the
// in-memory store with a 1 s lease within 45 s, and a store whose renew ignores the lease id fails
// the cases that judge renew. Also: its options are checked up front, and it skips what the options
// do not declare.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ELECTOR_MIN_MARGIN } from '../../lib/conformance/lease-expiry.cases.js';
import { MIN_MARGIN_FRACTION, MIN_MARGIN_MS } from '../../lib/election/elector-options.js';
import { leaseStoreConformance } from '../../lib/store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { buildSampleApp } from '../support/build-sample-app.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** The budget for the whole suite on the in-memory store with a 1 s lease. */
const BUDGET_MS = 45_000;

interface TapRun {
  code: number | null;
  passed: string[];
  failed: string[];
  skipped: string[];
  tookMs: number;
  output: string;
}

/** `node --test` on one file with the TAP reporter: the top-level results by name. */
function nodeTest(file: string): Promise<TapRun> {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--test', '--test-reporter=tap', join(ROOT, 'test/conformance/node-test', file)],
      { cwd: ROOT, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const run: TapRun = {
          code: error ? (error.code as number | null) : 0,
          passed: [],
          failed: [],
          skipped: [],
          tookMs: 0,
          output: stdout + stderr,
        };
        run.tookMs = performance.now() - startedAt;
        // Top-level results are not indented; a subtest's are.
        for (const match of stdout.matchAll(/^(ok|not ok) \d+ - (.*?)( # SKIP.*)?$/gm)) {
          const [, verdict, name, skip] = match as unknown as [string, string, string, string | undefined];
          (skip ? run.skipped : verdict === 'ok' ? run.passed : run.failed).push(name);
        }
        resolve(run);
      },
    );
  });
}

describe('the exported conformance suite under node:test (built package)', () => {
  beforeAll(() => buildSampleApp(), 300_000);

  it(`passes for the in-memory store with leaseDurationMs 1000 within ${BUDGET_MS / 1000} s`, async () => {
    const run = await nodeTest('memory.test.mjs');
    expect({ code: run.code, failed: run.failed }).toEqual({ code: 0, failed: [] });
    // Only the cases needing a fixture the file does not give are skipped.
    expect(run.skipped.every((name) => name.startsWith('faults:') || name.includes('missing namespace'))).toBe(true);
    expect(run.skipped).toHaveLength(5);
    expect(run.passed.length).toBeGreaterThanOrEqual(40);
    // Every capability the file declares runs, shared records included.
    expect(run.passed.filter((name) => name.startsWith('shared records:')).length).toBeGreaterThanOrEqual(11);
    console.info(
      `exported suite, InMemoryLeaseStore, 1 s lease: ${run.passed.length} passed, ${run.skipped.length} skipped in ${Math.round(run.tookMs)} ms`,
    );
    expect(run.tookMs).toBeLessThan(BUDGET_MS);
  }, 120_000);

  it('fails for a store whose renew ignores the lease id, in the cases that judge renew', async () => {
    const run = await nodeTest('broken-renew.test.mjs');
    expect(run.code).not.toBe(0);
    expect(run.failed).toEqual(
      expect.arrayContaining([
        expect.stringContaining('only the holder renews and releases'),
        expect.stringContaining("cannot renew or release another's lease"),
        expect.stringContaining('an expired lease is taken over with a greater term'),
      ]),
    );
    // Not a suite that fails whatever the store: the cases that never renew a lease not ours pass.
    expect(run.passed).toEqual(
      expect.arrayContaining([expect.stringContaining('exactly one of 20 concurrent acquirers')]),
    );
    expect(run.output).toContain('expected a rejection of kind "lost", but the call succeeded');
  }, 120_000);
});

describe('leaseStoreConformance options', () => {
  it('refuses an invalid option up front, naming it and its allowed range', () => {
    const createStore = () => new InMemoryLeaseStore();
    expect(() => leaseStoreConformance({ createStore, leaseDurationMs: 0 })).toThrow(
      /leaseDurationMs must be an integer ≥ 1 \(got 0\)/,
    );
    expect(() => leaseStoreConformance({ createStore, expiryGranularityMs: -1 })).toThrow(
      /expiryGranularityMs must be an integer from 0 to 60000/,
    );
    expect(() => leaseStoreConformance({} as never)).toThrow(/createStore must be a function/);
  });

  it('skips the cases of an undeclared capability or a missing fixture, and fails a store that declares a capability it lacks', async () => {
    const store = new InMemoryLeaseStore();
    const cases = leaseStoreConformance({ createStore: () => store });
    const skipped = cases.filter((c) => c.skip).map((c) => c.name.split(':')[0]);
    expect(new Set(skipped)).toEqual(
      new Set(['lease', 'leader state', 'handover', 'shared records', 'folded renewal', 'push', 'faults']),
    );
    expect(cases.filter((c) => c.skip).every((c) => typeof c.skipReason === 'string')).toBe(true);
    expect(cases.filter((c) => !c.concurrent).map((c) => c.name)).toEqual([
      expect.stringContaining('client clock minutes off'),
    ]);
    // The in-memory store implements every capability; options declaring none do not match it.
    const declared = cases.find((c) => c.name.startsWith('capabilities:'));
    await expect(declared?.run()).rejects.toThrow(/leaderState is false/);
  });

  it('fails a store that declares records without both record methods, or has one without declaring them', async () => {
    const all = { leaderState: true, handover: true, push: true, renewWith: true } as const;
    const capabilities = (options: Omit<Parameters<typeof leaseStoreConformance>[0], 'createStore'>) => {
      // Half of the pair: readRecord without writeRecord.
      const half = new InMemoryLeaseStore();
      Object.defineProperty(half, 'writeRecord', { value: undefined });
      return leaseStoreConformance({ createStore: () => half, ...options }).find((c) =>
        c.name.startsWith('capabilities:'),
      );
    };
    await expect(capabilities({ ...all, records: true })?.run()).rejects.toThrow(/records is true/);
    await expect(capabilities(all)?.run()).rejects.toThrow(/a record method without the capability/);
    const whole = new InMemoryLeaseStore();
    const declared = leaseStoreConformance({ createStore: () => whole, ...all, records: true });
    await expect(declared.find((c) => c.name.startsWith('capabilities:'))?.run()).resolves.toBeUndefined();
    expect(declared.filter((c) => c.name.startsWith('shared records:') && c.skip)).toEqual([]);
  });

  it("writes out the elector's least margin as the elector enforces it", () => {
    expect(ELECTOR_MIN_MARGIN).toEqual({ ms: MIN_MARGIN_MS, fraction: MIN_MARGIN_FRACTION });
  });
});
