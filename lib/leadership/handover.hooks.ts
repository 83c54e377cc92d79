import type { HandoverHooks } from '../election/elector.js';
import type { Clock } from '../shared/clock.js';
import type { HandoverRequest } from '../stores/lease-store.js';
import { leadershipMessages as messages } from './leadership.messages.js';
import type { StepDown, StepDownState } from './step-down.state.js';
import type { WorkDrain } from './work.drain.js';

/** What an election's handover hooks act on (its runtime's parts). */
export interface HandoverHookParts {
  /** The elector's current term and its signal (read at the call: the elector is made after the hooks). */
  current(): { term: number | undefined; signal: AbortSignal; election: string };
  readonly stepDown: StepDownState;
  readonly drains: WorkDrain;
  readonly clock: Clock;
  /** After the drain, while the lease is still ours: the jobs' buffered run records (bounded; undefined: none). */
  flushJobs(): Promise<void> | undefined;
}

/**
 * The elector's handover hooks of one election: drain its work as shutdown does (the lease is
 * renewed meanwhile), write the jobs' last run records, then — the term over — a short grace before
 * the release, after which this replica is a follower like any other.
 */
export function drainingHandoverHooks(parts: HandoverHookParts): Required<HandoverHooks> {
  const { stepDown, drains, clock } = parts;
  return {
    beforeStepDown: async (request: HandoverRequest) => {
      const { term } = request;
      const current = parts.current();
      // Its term already ended: nothing to drain for it (the elector abandons the handover).
      if (current.term !== term) return;
      stepDown.set({ term, since: clock.now(), drains: true, releasing: false });
      // Ends with the term too: a drain past it hands nothing over and only delays the next term.
      await drains.drain(messages.handoverDrainWaiting(current.election, request.id), current.signal);
      const flushing = parts.flushJobs();
      if (flushing) await flushing;
    },
    beforeRelease: async (request: HandoverRequest) => {
      const step: StepDown = { term: request.term, since: clock.now(), drains: false, releasing: true };
      stepDown.set(step);
      try {
        await drains.graceAfterAbort();
      } finally {
        // Now a follower like any other.
        if (stepDown.current === step) stepDown.set(undefined);
      }
    },
  };
}
