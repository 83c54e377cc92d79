// One replica's view of one election's leader state for the tick-ledger specs: it leads term 1,
// its writes land. What the ledger reads and writes, outside Nest and without a store.
import type { LeaderStateAccess } from '../../lib/leadership/tick.ledger.js';
import { LeaseLostError } from '../../lib/shared/errors.js';
import type { LeaderStateEntry } from '../../lib/stores/lease-store.js';

export function leaderState(election: string): LeaderStateAccess & { entries: Map<string, LeaderStateEntry<unknown>> } {
  const entries = new Map<string, LeaderStateEntry<unknown>>();
  return {
    entries,
    term: 1,
    signal: new AbortController().signal,
    election,
    async readState<T>(key = 'state') {
      return entries.get(key) as LeaderStateEntry<T> | undefined;
    },
    async writeTickRecord(value: number, key: string) {
      if (!key.startsWith('tick:')) throw new LeaseLostError('not a tick key');
      entries.set(key, { value, term: 1 });
    },
  };
}
