// Issue #13 item 7: two electors started at the same moment on PostgreSQL. The loser must learn who
// leads from its first, losing acquire — `leaderId` set and `leader-changed` emitted — not at its
// next poll. Before the fix the losing statement's snapshot predated the winner's row in most warm
// races, so the loser reported no holder until it polled again.
import { randomBytes } from 'node:crypto';
import { Elector } from '../../lib/election/elector.js';
import type { LeadershipEvent } from '../../lib/election/elector.types.js';
import { PostgresLeaseStore } from '../../lib/stores/postgres/postgres.store.js';
import { dropPostgresTables, PG_URL, uniqueName } from '../setup/servers.js';

const table = uniqueName('le_pg_start');
// The next poll is 30 s away: a loser that names the leader sooner learned it from its first acquire.
const timings = { leaseDurationMs: 60_000, renewDeadlineMs: 40_000, renewIntervalMs: 10_000, retryIntervalMs: 30_000 };
const FIRST_ATTEMPT_MS = 10_000;
// One race hits the stale snapshot about 2 times in 3 (22 of 30 before the fix): five rounds leave a
// regression about a 1-in-700 chance of passing.
const ROUNDS = 5;
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

const stores = [
  new PostgresLeaseStore({ connection: PG_URL, table }),
  new PostgresLeaseStore({ connection: PG_URL, table }),
];

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await dropPostgresTables(table);
});

/** Resolves with the first event of `elector` matching `accept`, or rejects after `ms`. */
function nextEvent(
  elector: Elector,
  accept: (event: LeadershipEvent) => boolean,
  ms: number,
): Promise<LeadershipEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      subscription.unsubscribe();
      reject(new Error(`${elector.identity}: no matching event within ${ms} ms`));
    }, ms);
    const subscription = elector.events$.subscribe((event) => {
      if (!accept(event)) return;
      clearTimeout(timer);
      subscription.unsubscribe();
      resolve(event);
    });
  });
}

it(`after a simultaneous start on PostgreSQL the loser names the leader at once (${ROUNDS} warm races)`, async () => {
  // Warm: both pools connected and the table there, so the two acquires really run together.
  await Promise.all(stores.map((store) => store.read('warm', { signal: AbortSignal.timeout(10_000) })));
  for (let round = 0; round < ROUNDS; round++) {
    const election = `start-${round}-${randomBytes(4).toString('hex')}`;
    const electors = stores.map(
      (store, i) => new Elector({ store, election, identity: `replica-${i}`, logger: quiet, ...timings }),
    );
    try {
      // Each elector's first word on who leads: `elected`, or `leader-changed` naming someone.
      const outcomes = electors.map((elector) =>
        nextEvent(
          elector,
          (e) => e.type === 'elected' || (e.type === 'leader-changed' && e.leaderId !== undefined),
          FIRST_ATTEMPT_MS,
        ),
      );
      await Promise.all(electors.map((elector) => elector.start()));
      const events = await Promise.all(outcomes);
      const winners = electors.filter((_, i) => events[i]?.type === 'elected');
      expect(winners).toHaveLength(1);
      const winner = winners[0] as Elector;
      const loser = electors.find((elector) => elector !== winner) as Elector;
      expect(events[electors.indexOf(loser)]).toEqual({ type: 'leader-changed', leaderId: winner.identity });
      expect(loser.leaderId).toBe(winner.identity);
      expect(loser.status()).toMatchObject({ isLeader: false, leaderId: winner.identity, state: 'follower' });
    } finally {
      await Promise.all(electors.map((elector) => elector.stop()));
    }
  }
});
