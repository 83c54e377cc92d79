import { setTimeout as sleep } from 'node:timers/promises';
import { LeaderElectionService, LeaderOnly } from '@leaderlease/nestjs';
import { Injectable, Logger } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { jobElections } from './config.js';
import { logEvent } from './log-event.js';

/**
 * The second election's job: on whichever replica leads `billing` — usually not the one that leads
 * `reports`, since spread gives each replica its share of the elections.
 */
@Injectable()
export class BillingService {
  private readonly logger = new Logger(BillingService.name);

  constructor(private readonly service: LeaderElectionService) {}

  @Cron('*/10 * * * * *', { name: 'billing' })
  @LeaderOnly(jobElections.billing)
  async closeInvoices(): Promise<void> {
    const election = this.service.election(jobElections.billing);
    const { term, signal } = election;
    if (term === undefined) return;
    try {
      await sleep(100, undefined, { signal }); // stands for the real work, fenced by `term` downstream
    } catch {
      return; // the term ended mid-work: the next leader runs the next tick
    }
    logEvent(
      this.logger,
      'job',
      { job: 'billing', election: election.election, term },
      `${election.election}: invoices closed with fencing term ${term}`,
    );
  }
}
