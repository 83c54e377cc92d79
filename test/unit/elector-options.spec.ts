import { Elector, type ElectorOptions } from '../../lib/election/elector.js';
import { handoverReserveMs, resolveElectorOptions } from '../../lib/election/elector-options.js';
import { releaseReservation } from '../../lib/stores/handover-support.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';

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

    // Every combination the docs, tests, bench, sample app and scripts use (grep of LEASE/RENEW).
    it.each([
      ['defaults', {}],
      [
        'docs: a quarter of the lease, deadline 4x renew',
        { leaseDurationMs: 2000, renewDeadlineMs: 1400, renewIntervalMs: 350 },
      ],
      ['docs: lease 3000', { leaseDurationMs: 3000, renewDeadlineMs: 2000, renewIntervalMs: 500 }],
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

// Issue 24, defect 2: the reservation a directed handover writes (one lease, or with standby
// followers standbyPollMs × 1.15 + the call timeout) must be one the store keeps: at most its
// longest lease. Options that would need more fail here; the default standbyPollMs shortens to fit.
describe('Elector options: the handover reservation fits the store', () => {
  const HOUR = 3_600_000;
  const limitsOf = (name: string, limits: LeaseStore['limits']): LeaseStore =>
    Object.assign(new InMemoryLeaseStore(), { name, limits });
  const serverClock = limitsOf('ServerClockStore', {
    minLeaseDurationMs: 1_000,
    maxLeaseDurationMs: 24 * HOUR,
    reason: 'server-side expiry',
  });
  const azureLike = limitsOf('AzureLikeStore', {
    minLeaseDurationMs: 15_000,
    maxLeaseDurationMs: 60_000,
    leaseDurationStepMs: 1000,
    reason: 'leases last 15 to 60 seconds',
  });
  const resolve = (store: LeaseStore, options: Partial<ElectorOptions>) =>
    resolveElectorOptions({ store, election: 'jobs', ...options });

  it('a 24 h lease and an hour of standby poll are accepted where the store keeps 24 h leases', () => {
    for (const options of [
      { leaseDurationMs: 24 * HOUR },
      { leaseDurationMs: 2 * HOUR, activeFollowers: 1, standbyPollMs: HOUR },
      { activeFollowers: 1, standbyPollMs: HOUR },
    ]) {
      const resolved = resolve(serverClock, options);
      expect(handoverReserveMs(resolved.timings, resolved.standby)).toBeLessThanOrEqual(24 * HOUR);
    }
    expect(
      handoverReserveMs(resolve(serverClock, { activeFollowers: 1, standbyPollMs: HOUR }).timings, {
        activeFollowers: 1,
        standbyPollMs: HOUR,
      }),
    ).toBe(Math.ceil(HOUR * 1.15 + 7_500));
  });

  it('a standbyPollMs whose reservation outlasts the store’s longest lease is refused, naming the option and the range', () => {
    // Lease 15 s: call timeout 10000 − 2500 = 7500 ms; (60000 − 7500 − 1) / 1.15 → at most 45651 ms.
    expect(() => resolve(azureLike, { activeFollowers: 1, standbyPollMs: HOUR })).toThrow(
      /^standbyPollMs must be whole milliseconds from retryIntervalMs \(2000\) to 45651 for AzureLikeStore: .*standbyPollMs × 1\.15 \+ the call timeout .*7500 ms.*longest lease \(60000 ms\) \(got 3600000\)$/,
    );
    expect(resolve(azureLike, { activeFollowers: 1, standbyPollMs: 45_651 }).standby?.standbyPollMs).toBe(45_651);
  });

  it('the default standbyPollMs (30 s) shortens to fit a store whose longest lease is short', () => {
    // Lease 60 s, scaled timings: call timeout 40000 − 10000 = 30000 ms; (60000 − 30000 − 1) / 1.15 → 26086.
    const resolved = resolve(azureLike, { leaseDurationMs: 60_000, activeFollowers: 1 });
    expect(resolved.standby?.standbyPollMs).toBe(26_086);
    expect(handoverReserveMs(resolved.timings, resolved.standby)).toBeLessThanOrEqual(60_000);
    expect(resolve(azureLike, { activeFollowers: 1 }).standby?.standbyPollMs).toBe(30_000);
  });

  it('when no standbyPollMs fits at all, activeFollowers is refused with what to shorten', () => {
    const options = {
      leaseDurationMs: 60_000,
      renewDeadlineMs: 45_000,
      renewIntervalMs: 5_000,
      retryIntervalMs: 40_000,
    };
    expect(() => resolve(azureLike, { ...options, activeFollowers: 1 })).toThrow(
      /^activeFollowers: no standbyPollMs fits AzureLikeStore: .*shorten retryIntervalMs or renewDeadlineMs − renewIntervalMs$/,
    );
  });

  it('property: for every timing the options accept, the reservation is one the store accepts at release', () => {
    let seed = 24;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let accepted = 0;
    for (const store of [serverClock, azureLike, new InMemoryLeaseStore()]) {
      const { minLeaseDurationMs: min, maxLeaseDurationMs: max } = store.limits;
      const top = Math.min(max, 48 * HOUR);
      for (let i = 0; i < 2_000; i += 1) {
        const lease = Math.round((min + random() * (top - min)) / 1000) * 1000;
        const options: Partial<ElectorOptions> = { leaseDurationMs: lease };
        if (random() < 0.5) options.retryIntervalMs = Math.max(1, Math.round(random() * lease));
        if (random() < 0.7) {
          options.activeFollowers = 1;
          if (random() < 0.7) options.standbyPollMs = Math.round(random() * 1.2 * HOUR);
        }
        let resolved: ReturnType<typeof resolveElectorOptions>;
        try {
          resolved = resolve(store, options);
        } catch {
          continue;
        }
        accepted += 1;
        const reserveMs = handoverReserveMs(resolved.timings, resolved.standby);
        expect(() =>
          releaseReservation({ signal: new AbortController().signal, handoverTo: 'b', reserveMs }, store.limits),
        ).not.toThrow();
      }
    }
    expect(accepted).toBeGreaterThan(1_000);
  });
});
