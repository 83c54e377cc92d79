import { Elector, type ElectorOptions } from '../../lib/election/elector.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory.store.js';

describe('Elector options: validation at construction', () => {
  const memory = new InMemoryLeaseStore();
  const azureLike: LeaseStore = Object.assign(new InMemoryLeaseStore(), {
    name: 'AzureLikeStore',
    limits: {
      minLeaseDurationMs: 15_000,
      maxLeaseDurationMs: 60_000,
      leaseDurationStepMs: 1000,
      reason: 'leases last 15 to 60 seconds',
    },
  });
  const make = (options: Partial<ElectorOptions>) => () =>
    new Elector({ store: memory, election: 'jobs', ...options } as ElectorOptions);

  it.each([
    [{ leaseDurationMs: 0 }, /leaseDurationMs must be a positive/],
    [{ renewDeadlineMs: -1 }, /renewDeadlineMs must be a positive/],
    [{ retryIntervalMs: Number.NaN }, /retryIntervalMs must be a positive/],
    [{ renewIntervalMs: 'x' as unknown as number }, /renewIntervalMs must be a positive/],
    [
      { leaseDurationMs: 3000, renewDeadlineMs: 3000 },
      /renewDeadlineMs must be greater than renewIntervalMs .* and less than leaseDurationMs \(3000\)/,
    ],
    [{ renewDeadlineMs: 2000, renewIntervalMs: 2500 }, /renewDeadlineMs must be greater than renewIntervalMs \(2500\)/],
    [{ election: '' }, /election must be a non-empty string/],
    [{ election: 'a/b' }, /election must be/],
    [{ identity: '  ' }, /identity must be a non-empty string/],
    [{ store: undefined }, /store is required/],
  ])('%j is refused', (options, message) => {
    expect(make(options)).toThrow(message);
  });

  it("refuses a lease duration outside the store's range, quoting the store's reason", () => {
    expect(make({ store: azureLike, leaseDurationMs: 10_000 })).toThrow(
      'leaseDurationMs must be between 15000 and 60000 ms (15 s–60 s) for AzureLikeStore: leases last 15 to 60 seconds; got 10000',
    );
    expect(make({ store: azureLike, leaseDurationMs: 61_000 })).toThrow(
      /leaseDurationMs must be between 15000 and 60000/,
    );
    expect(make({ store: azureLike, leaseDurationMs: 15_500 })).toThrow(/multiple of 1000 ms/);
    expect(make({ store: azureLike })).not.toThrow();
  });

  it('scales unspecified timings down with a short lease', () => {
    const e = new Elector({ store: memory, election: 'jobs', leaseDurationMs: 1500 });
    expect(e.timings).toEqual({
      leaseDurationMs: 1500,
      renewDeadlineMs: 1000,
      renewIntervalMs: 250,
      retryIntervalMs: 200,
    });
  });

  describe('safety margin (leaseDurationMs - renewDeadlineMs)', () => {
    it.each([
      [{ leaseDurationMs: 3000, renewDeadlineMs: 2999, renewIntervalMs: 500 }, 1, 600],
      [{ leaseDurationMs: 15_000, renewDeadlineMs: 14_000, renewIntervalMs: 2000 }, 1000, 3000],
      [{ leaseDurationMs: 2000, renewDeadlineMs: 1700, renewIntervalMs: 400 }, 300, 400],
      [{ leaseDurationMs: 400, renewDeadlineMs: 350, renewIntervalMs: 100 }, 50, 100],
    ])('%j is refused, naming the options and the reason', (options, margin, minimum) => {
      const { leaseDurationMs: lease, renewDeadlineMs: deadline } = options;
      expect(make(options)).toThrow(
        `leaseDurationMs (${lease}) - renewDeadlineMs (${deadline}) = ${margin} ms is too small a safety margin: ` +
          `it must be at least ${minimum} ms (the larger of 100 ms and 1/5 of leaseDurationMs), because a leader ` +
          'steps down up to one event-loop stall after its renew deadline and that lag must end before the store ' +
          'lets another instance take the lease',
      );
    });

    // Every combination the README, tests, bench, sample app and scripts use (grep of LEASE/RENEW).
    it.each([
      ['defaults', {}],
      [
        'README: a quarter of the lease, deadline 4x renew',
        { leaseDurationMs: 2000, renewDeadlineMs: 1400, renewIntervalMs: 350 },
      ],
      ['README: lease 3000', { leaseDurationMs: 3000, renewDeadlineMs: 2000, renewIntervalMs: 500 }],
      ['quarter margin, deadline 2.5x renew', { leaseDurationMs: 4000, renewDeadlineMs: 3000, renewIntervalMs: 1200 }],
      ['bench replica', { leaseDurationMs: 2000, renewDeadlineMs: 1400, renewIntervalMs: 400 }],
      ['chaos fixture (Azure minimum)', { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, renewIntervalMs: 2000 }],
      ['bench overhead app', { leaseDurationMs: 600_000, renewIntervalMs: 60_000 }],
      ['scaled 500 ms lease', { leaseDurationMs: 500 }],
      ['scaled 1 s lease (store conformance)', { leaseDurationMs: 1000 }],
      ['fixture renew 1 s', { leaseDurationMs: 15_000, renewIntervalMs: 1000 }],
    ])('%s is accepted', (_name, options) => {
      expect(make(options)).not.toThrow();
    });

    // Audit gap 7: the rule of thumb (a quarter margin, deadline >= 2.5x renew) holds for every
    // lease of at least 400 ms, which covers every networked store's minimum (1 s and up). Below, the
    // 100 ms floor wins on purpose: a stall or a round trip does not shrink with the lease.
    it.each([400, 500, 1000, 1500, 2000, 3000, 4000, 15_000, 60_000])(
      'a quarter margin with the deadline 2.5x the renew interval is accepted for a %i ms lease',
      (lease) => {
        const deadline = lease * 0.75;
        expect(
          make({ leaseDurationMs: lease, renewDeadlineMs: deadline, renewIntervalMs: deadline / 2.5 }),
        ).not.toThrow();
      },
    );

    it.each([
      [300, 225, 90],
      [396, 297, 118.8],
    ])('under 400 ms the 100 ms floor refuses a quarter margin (%i/%i/%i)', (lease, deadline, renew) => {
      expect(make({ leaseDurationMs: lease, renewDeadlineMs: deadline, renewIntervalMs: renew })).toThrow(
        `= ${lease - deadline} ms is too small a safety margin: it must be at least 100 ms (the larger of 100 ms and 1/5 of leaseDurationMs)`,
      );
    });
  });
});
