import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { LeaderElectionService, LeaderOnly } from 'nestjs-leader-election';
import { logEvent } from './log-event.js';

export interface ReportResult {
  report: number;
  term: number;
  ranBy: string;
  trigger: 'cron' | 'http';
}

/** Work that must happen once per cluster, not once per replica. */
@Injectable()
export class JobsService {
  private readonly logger = new Logger(JobsService.name);
  private reports = 0;

  constructor(private readonly election: LeaderElectionService) {}

  /** Every 5 s on the leader; on followers the call is skipped (it returns undefined, nothing is thrown). */
  @Cron('*/5 * * * * *', { name: 'report' })
  @LeaderOnly()
  async scheduledReport(): Promise<void> {
    await this.writeReport('cron');
  }

  /**
   * Writes a "report" tagged with the current term. The term is the fencing token: a real
   * downstream store would reject writes carrying a term lower than the highest it has seen, so a
   * stale leader (paused, then resumed after losing its lease) cannot overwrite its successor.
   */
  async writeReport(trigger: ReportResult['trigger']): Promise<ReportResult | undefined> {
    // Read both at the start: the signal aborts the moment this term ends, mid-work included.
    const { term, signal } = this.election;
    if (term === undefined) return undefined;
    const report = ++this.reports;
    try {
      await sleep(200, undefined, { signal }); // stands for the real work
    } catch {
      logEvent(
        this.logger,
        'job-aborted',
        { job: 'report', report, term, trigger },
        `report #${report} abandoned: term ${term} ended mid-work`,
      );
      return undefined;
    }
    const ranBy = this.election.identity;
    logEvent(
      this.logger,
      'job',
      { job: 'report', report, term, trigger },
      `report #${report} written with fencing term ${term} (${trigger})`,
    );
    return { report, term, ranBy, trigger };
  }
}
