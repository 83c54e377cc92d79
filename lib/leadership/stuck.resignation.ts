import type { Clock } from '../shared/clock.js';
import { errorMessage } from '../shared/errors.js';
import { leadershipMessages as messages } from './leadership.messages.js';
import type { StepDownState } from './step-down.state.js';
import type { StuckWork } from './stuck-work.detector.js';

/** What the rule reads of the election and asks of its elector. */
export interface ResigningElection {
  readonly election: string;
  /** The elector's current term (the lease's, stepping down or not). */
  readonly term: number | undefined;
  readonly isSteppingDown: boolean;
  resign(): Promise<void>;
}

/**
 * Rule (resignWhenStuck): a leader whose work is stuck does not keep the lease. It resigns when
 * the work becomes stuck, and again in every later term it wins while that work is still stuck —
 * at most once per term — so leadership does not settle on a replica whose work cannot end.
 * Not while stepping down already (the drain ends the term anyway). No new work starts from here.
 */
export class StuckResignation {
  /** The last term we resigned for stuck work (at most once per term). */
  private resignedTerm?: number;

  constructor(
    private readonly enabled: boolean,
    private readonly election: ResigningElection,
    private readonly stepDown: StepDownState,
    private readonly clock: Clock,
    private readonly logger: { warn(message: string): void; error(message: string): void },
  ) {}

  /** Work became stuck: said at warn level, and with resignWhenStuck the term is given up. */
  onStuck(work: StuckWork): void {
    this.logger.warn(messages.stuckWork(this.election.election, work.handler, work.runningMs, work.stuckAfterMs));
    this.resign(work.handler, false);
  }

  /** A term won while work of an earlier one is still stuck is given up too. */
  onElected(stuck: StuckWork | undefined): void {
    if (this.enabled && stuck) this.resign(stuck.handler, true);
  }

  private resign(handler: string, again: boolean): void {
    if (!this.enabled) return;
    const { election, logger } = this;
    const term = election.term;
    if (term === undefined || term === this.resignedTerm || election.isSteppingDown) return;
    this.resignedTerm = term;
    this.stepDown.set({ term, since: this.clock.now(), drains: false, releasing: false });
    logger.warn(
      again
        ? messages.resigningStuckAgain(election.election, handler, term)
        : messages.resigningStuck(election.election, handler),
    );
    // Not from inside the elector's own 'elected' event: let it finish becoming leader first.
    queueMicrotask(() => {
      if (election.term !== term) return;
      election.resign().catch((error: unknown) => logger.error(errorMessage(error)));
    });
  }
}
