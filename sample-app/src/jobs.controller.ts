import { LeaderOnly } from '@leaderlease/nestjs';
import { Controller, HttpCode, HttpStatus, Post, ServiceUnavailableException } from '@nestjs/common';
import { jobElections } from './config.js';
import { JobsService, type ReportResult } from './jobs.service.js';

@Controller('jobs')
export class JobsController {
  constructor(private readonly jobs: JobsService) {}

  /** Leader of the default election only: followers answer 503 with Retry-After and the leader's id (X-Leader-Id). */
  @Post('run-now')
  @HttpCode(HttpStatus.OK)
  @LeaderOnly(jobElections.reports)
  async runNow(): Promise<ReportResult> {
    const result = await this.jobs.writeReport('http');
    // Leadership ended while the report was being written: say so rather than answer 200.
    if (!result) throw new ServiceUnavailableException('leadership ended before the report was written');
    return result;
  }
}
