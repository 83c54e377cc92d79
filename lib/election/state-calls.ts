import { LeaseLostError } from '../shared/errors.js';
import { stateUnsupportedError, supportsState } from '../stores/lease-store.capabilities.js';
import type { LeaderStateEntry } from '../stores/lease-store.js';
import { electionMessages as messages } from './election.messages.js';
import type { LoopCalls, LoopDeps } from './loop-deps.js';
import type { TermKeeper } from './term-keeper.js';

/**
 * Leader state (`readState`, `writeState` and the once-per-tick records): written with the lease of
 * the term we lead, so the store refuses it once the lease is not ours.
 */
export class LeaderStateCalls {
  constructor(
    private readonly d: Pick<LoopDeps, 'store' | 'election'>,
    private readonly lent: LoopCalls,
    private readonly terms: Pick<TermKeeper, 'leading' | 'term' | 'stepDown'>,
  ) {}

  /**
   * Rejects at once (nothing sent) when not leading or past the deadline; the call is bounded by
   * the term's remaining time, like a renew. A `LeaseLostError` from the store ends the term.
   */
  async write(value: unknown, key: string | undefined): Promise<void> {
    const { store, election } = this.d;
    if (!supportsState(store)) throw stateUnsupportedError(store);
    const term = this.terms.leading();
    if (!term) throw new LeaseLostError(messages.stateNotLeader(election));
    try {
      await this.lent.calls.call('writeState', term.remainingMs(), (signal) =>
        store.writeState(term.lease, value, key === undefined ? { signal } : { signal, key }),
      );
    } catch (error) {
      // The store judged our lease gone: the term is over here too (a renew would say the same).
      if (error instanceof LeaseLostError && this.terms.term === term) this.terms.stepDown(messages.reasonLost, false);
      throw error;
    }
  }

  /** Any replica may read; bounded like a follower's call. */
  async read(key: string | undefined): Promise<LeaderStateEntry | undefined> {
    const { store, election } = this.d;
    if (!supportsState(store)) throw stateUnsupportedError(store);
    return this.lent.calls.call('readState', this.lent.callTimeoutMs, (signal) =>
      store.readState(election, key === undefined ? { signal } : { signal, key }),
    );
  }
}
