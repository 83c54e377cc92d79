import { callTimeoutMs } from '../../election/elector-options.js';
import { claimRunNowCommands, returnRunNowCommands } from '../../election/job-board.calls.js';
import { type JobBoard, MAX_RUN_NOW_QUEUE, type RunNowCommand } from '../../election/job-board.js';
import { timeoutSignal } from '../../shared/clock.js';
import { errorMessage } from '../../shared/errors.js';
import type { LeaseStore } from '../../stores/lease-store.js';
import { isPromiseLike } from '../in-flight.tracker.js';
import type { LeaderWork } from '../leader-work.js';
import { leadershipMessages } from '../leadership.messages.js';
import type { JobDefinition } from './job.definition.js';
import type { JobRuns } from './job.runs.js';
import { type BoardHost, iso } from './job-board.view.js';

const messages = leadershipMessages.jobs;

/** What the claims read of their election (the runtime). */
export interface ClaimHost extends BoardHost {
  readonly work: LeaderWork;
  /** Leading right now (before the deadline, not stepping down). */
  isLeader(): boolean;
}

/**
 * The leader's run-now commands: claimed from the board by compare-and-set BEFORE they run (so
 * each runs at most once, across failovers too), then run once each through the leader-only path.
 *
 * Where run now meets a handover or a resignation: a claim whose term ended before it could run
 * (the claim's write was out when the drain began or the deadline passed) is given back, at the
 * head of the queue, for the next leader. It never ran, so at most once still holds, and it is not
 * lost. It is lost only where the leader cannot tell: a crash between claim and run, a claim's
 * answer lost, or a board it cannot write (each warned of when seen).
 */
export class RunNowClaims {
  private claiming = false;

  constructor(
    private readonly host: ClaimHost,
    private readonly store: LeaseStore,
    private readonly jobs: { get(name: string): JobDefinition | undefined },
    private readonly runs: JobRuns,
    private readonly logger: { log(message: string): void; warn(message: string): void; error(message: string): void },
  ) {}

  /** A read of the board in `term`: claims the commands of our jobs on it, unless a claim is under way. */
  seen(board: JobBoard, term: number): void {
    if (!this.claiming && board.runNow.some((command) => this.jobs.get(command.job))) void this.claim(term);
  }

  private async claim(term: number): Promise<void> {
    const { host } = this;
    if (!host.isLeader() || host.term !== term) return;
    this.claiming = true;
    // Bounded by the call timeout, not by the term: a claim that lands as the term ends must still
    // be answered, so what it took can be given back.
    const { signal, dispose } = timeoutSignal(host.clock, callTimeoutMs(host.timings));
    let claimed: RunNowCommand[];
    try {
      claimed = await claimRunNowCommands(this.store, host.election, (c) => this.jobs.get(c.job) !== undefined, signal);
    } catch (error) {
      // Not written: left on the board, the next read finds it again. Written but its answer lost:
      // gone, and nobody runs it (at most once); the warning tells the operator to check.
      if (host.term === term) this.logger.warn(messages.claimFailed(host.election, errorMessage(error)));
      return;
    } finally {
      dispose();
      this.claiming = false;
    }
    const unrun = claimed.filter((command) => !this.run(command, term));
    if (unrun.length > 0) await this.giveBack(unrun);
  }

  /** Runs `command` if `term` still leads; false when it ended (the command is to be given back). */
  private run(command: RunNowCommand, term: number): boolean {
    const { host } = this;
    if (!host.isLeader() || host.term !== term) return false;
    const job = this.jobs.get(command.job) as JobDefinition;
    this.logger.log(messages.runNowApplied(host.election, job.name, command.by, iso(command.at), command.id));
    const failed = (error: unknown) =>
      this.logger.error(messages.runNowFailed(host.election, job.name, command.id, errorMessage(error)));
    try {
      const result = this.runs.track(job, { trigger: 'run-now', commandId: command.id }, () =>
        host.work.run(job.label, job.invoke),
      );
      if (isPromiseLike(result)) Promise.resolve(result).catch(failed);
    } catch (error) {
      failed(error);
    }
    return true;
  }

  private async giveBack(commands: RunNowCommand[]): Promise<void> {
    const { host } = this;
    const { signal, dispose } = timeoutSignal(host.clock, callTimeoutMs(host.timings));
    try {
      const left = await returnRunNowCommands(this.store, host.election, commands, signal);
      for (const { job, id, by } of commands) {
        if (left.some((command) => command.id === id)) {
          this.logger.warn(
            messages.runNowDropped(host.election, job, id, by, messages.runNowQueueFull(MAX_RUN_NOW_QUEUE)),
          );
        } else {
          this.logger.log(messages.runNowReturned(host.election, job, id, by));
        }
      }
    } catch (error) {
      const reason = errorMessage(error);
      for (const { job, id, by } of commands)
        this.logger.warn(messages.runNowDropped(host.election, job, id, by, reason));
    } finally {
      dispose();
    }
  }
}
