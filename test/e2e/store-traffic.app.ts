// The app of store-traffic.spec.ts: a store behind a proxy that counts every method call on the
// store object, and the two jobs of issue 29's "done when" (a once-per-tick cron job firing every
// second, a plain leader-only interval job whose runs job control records in the history).
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Cron, Interval } from '@nestjs/schedule';
import { currentLeadership } from '../../lib/leadership/leadership-context.js';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';

export const TICK_JOB = 'traffic.close';
export const INTERVAL_JOB = 'traffic.refresh';

/** Calls on one store object: by method name, and `writeState` by the key it wrote. */
export interface Counts {
  calls: Map<string, number>;
  writes: Map<string, number>;
}

/** One run of the once-per-tick job, with its replica's counts at that instant (the ledger wrote the tick just before). */
export interface TickRun {
  app: string;
  at: number;
  term: number | undefined;
  counts: Counts;
}

/** Per replica identity, the counts of its store (identities are unique per test). */
const countsOf = new Map<string, Counts>();
/** Every once-per-tick run, and every interval run, of every app in the process. */
export const tickRuns: TickRun[] = [];
export const intervalRuns: Array<{ app: string; at: number }> = [];

/**
 * `inner` behind a proxy counting every method call on it, for the replica `identity`. `folds: false`
 * hides `renewWith`, as on a store that does not fold (the elector then renews and reads separately).
 * Methods run on the store itself (not the proxy): its own inner calls are not the app's traffic.
 */
export function countingStore(
  identity: string,
  inner: LeaseStore,
  folds: boolean,
): { store: LeaseStore; counts: Counts } {
  const counts: Counts = { calls: new Map(), writes: new Map() };
  countsOf.set(identity, counts);
  const store = new Proxy(inner, {
    get(target, property) {
      if (property === 'renewWith' && !folds) return undefined;
      const value = Reflect.get(target, property);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value;
      return (...args: unknown[]) => {
        bump(counts.calls, property);
        if (property === 'writeState') bump(counts.writes, (args[2] as { key?: string } | undefined)?.key ?? 'state');
        return Reflect.apply(value, target, args);
      };
    },
  });
  return { store, counts };
}

function bump(map: Map<string, number>, name: string): void {
  map.set(name, (map.get(name) ?? 0) + 1);
}

/** What `later` holds beyond `earlier`, the names with no change left out. */
export function since(later: Map<string, number>, earlier: Map<string, number>): Map<string, number> {
  return new Map(
    [...later].map(([name, n]) => [name, n - (earlier.get(name) ?? 0)] as [string, number]).filter(([, n]) => n !== 0),
  );
}

export const sum = (counts: Map<string, number>) => [...counts.values()].reduce((total, n) => total + n, 0);

@Injectable()
export class TrafficJobs {
  constructor(private readonly service: LeaderElectionService) {}

  @LeaderOnly({ once: 'per-tick' })
  @Cron('* * * * * *', { name: TICK_JOB })
  close(): void {
    const app = this.service.identity;
    const counts = countsOf.get(app);
    tickRuns.push({
      app,
      at: Date.now(),
      term: currentLeadership()?.term,
      counts: { calls: new Map(counts?.calls), writes: new Map(counts?.writes) },
    });
  }

  @Interval(INTERVAL_JOB, 200)
  @LeaderOnly()
  refresh(): void {
    intervalRuns.push({ app: this.service.identity, at: Date.now() });
  }
}
