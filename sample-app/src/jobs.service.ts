import { setTimeout as sleep } from 'node:timers/promises';
import { type ElectionHandle, LeaderElectionService, LeaderOnly } from '@leaderlease/nestjs';
import { Injectable, Logger } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { jobElections } from './config.js';
import { logEvent } from './log-event.js';

export interface ReportResult {
  election: string;
  report: number;
  term: number;
  ranBy: string;
  trigger: 'cron' | 'http';
}

/** Leader-state key of the report counter (the library keeps its own records under `tick:…`). */
const REPORTS_KEY = 'reports';

/** Work that must happen once per cluster, not once per replica: the default election's job. */
@Injectable()
export class JobsService {
  private readonly logger = new Logger(JobsService.name);
  /** One report at a time in this process (cron and POST /jobs/run-now), so numbers never repeat. */
  private queue: Promise<unknown> = Promise.resolve();

  /** The default election (`reports` unless ELECTIONS/ELECTION say otherwise). */
  private readonly election: ElectionHandle;

  constructor(service: LeaderElectionService) {
    this.election = service.election(jobElections.reports);
  }

  /**
   * Every 5 s on the leader; on followers the call is skipped. `once: 'per-tick'`: each 5-second
   * tick runs at most once in the whole cluster, even when a handover falls on it (the run is
   * recorded in leader state before it starts); `missed: 'catch-up'`: a new leader runs the tick
   * the crashed one missed.
   */
  @Cron('*/5 * * * * *', { name: 'report' })
  @LeaderOnly({ election: jobElections.reports, once: 'per-tick', missed: 'catch-up' })
  async scheduledReport(): Promise<void> {
    await this.writeReport('cron');
  }

  /**
   * Writes a "report" tagged with the current term. The term is the fencing token: a real
   * downstream store would reject writes carrying a term lower than the highest it has seen, so a
   * stale leader (paused, then resumed after losing its lease) cannot overwrite its successor.
   */
  writeReport(trigger: ReportResult['trigger']): Promise<ReportResult | undefined> {
    const run = this.queue.then(() => this.writeNextReport(trigger));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * The counter lives in leader state, not in this process: a new leader continues the numbering
   * where the previous one stopped. The new number is saved with `writeState` after the work, fenced
   * by the store: a leader that lost its lease meanwhile cannot save it, so no number is reused by
   * two leaders' saved reports.
   */
  private async writeNextReport(trigger: ReportResult['trigger']): Promise<ReportResult | undefined> {
    // Read both at the start: the signal aborts the moment this term ends, mid-work included.
    const { term, signal } = this.election;
    if (term === undefined) return undefined;
    let report: number | undefined;
    try {
      report = ((await this.election.readState<number>(REPORTS_KEY))?.value ?? 0) + 1;
      await sleep(200, undefined, { signal }); // stands for the real work
      await this.election.writeState(report, REPORTS_KEY);
    } catch {
      // Ended mid-work, or the store refused the save (the lease is no longer ours).
      logEvent(
        this.logger,
        'job-aborted',
        { job: 'report', election: this.election.election, report: report ?? null, term, trigger },
        `report #${report ?? '?'} abandoned: term ${term} ended mid-work`,
      );
      return undefined;
    }
    const ranBy = this.election.identity;
    const { election } = this.election;
    logEvent(
      this.logger,
      'job',
      { job: 'report', election, report, term, trigger },
      `${election}: report #${report} written with fencing term ${term} (${trigger})`,
    );
    return { election, report, term, ranBy, trigger };
  }
}
