import type { Observable, Subscription } from 'rxjs';
import type { LeadershipTerm } from './election.handle.js';
import { leadershipMessages as messages } from './leadership.messages.js';

/** What waiting reads of an election. */
export interface AwaitedElection {
  readonly election: string;
  readonly isLeader$: Observable<boolean>;
  readonly term: number | undefined;
  readonly signal: AbortSignal;
}

/**
 * Resolves with the term once `election` leads (at once if it does). Rejects with the signal's
 * reason when `signal` aborts, or when the election stops first (`isLeader$` completes).
 */
export function waitForLeadership(election: AwaitedElection, signal?: AbortSignal): Promise<LeadershipTerm> {
  return new Promise<LeadershipTerm>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let settled = false;
    let subscription: Subscription | undefined;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      subscription?.unsubscribe();
      outcome();
    };
    const onAbort = () => settle(() => reject(signal?.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    subscription = election.isLeader$.subscribe({
      next: (leader) => {
        const term = election.term;
        if (leader && term !== undefined) settle(() => resolve({ term, signal: election.signal }));
      },
      complete: () => settle(() => reject(new Error(messages.waitStopped(election.election)))),
    });
    // The first value arrives during subscribe(), before `subscription` was assigned.
    if (settled) subscription.unsubscribe();
  });
}
