import { type JobInfo, type JobRun, LeaderElectionService } from '@leaderlease/nestjs';
import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Query } from '@nestjs/common';
import { parseJobCommandBody } from './job-command.request.js';
import { jobControlHttpError } from './job-control.errors.js';
import { parseElection } from './request-body.js';

/** `GET /jobs`: this replica's identity and every scheduled leader-only job, as `service.jobs()` lists them. */
export interface JobList {
  identity: string;
  jobs: JobInfo[];
}

/** The answer of a job command: what was recorded in the store, and by whom. */
export interface JobCommandAccepted {
  job: string;
  command: 'pause' | 'resume' | 'run-now';
  /** The election named in the request; null: whichever election runs that job. */
  election: string | null;
  requestedBy: string;
  /** The pause's reason, as recorded. */
  reason?: string;
  /** The run-now command's id: its run carries it as `commandId` in the job's history. */
  id?: string;
}

/**
 * Job control from ANY replica, leader or not: each command is written to the job board in the
 * lease store, where the leader of the job's election reads it at its next renewal (so a pause
 * holds across failovers and restarts). The status page's jobs table calls these. Errors: 404 for a
 * job this app does not run, 400 for a bad body, 503 when the store did not answer in time, 500
 * otherwise (see job-control.errors.ts).
 */
@Controller('jobs')
export class JobControlController {
  constructor(private readonly service: LeaderElectionService) {}

  /** Every election's jobs (or `?election=`'s) with pause, next run and last run; reads the store. */
  @Get()
  async list(@Query('election') election?: string): Promise<JobList> {
    const name = election === undefined ? undefined : parseElection(election, this.service.elections);
    try {
      return { identity: this.service.identity, jobs: await this.service.jobs(name) };
    } catch (error) {
      throw jobControlHttpError(error, 'the jobs could not be read');
    }
  }

  /** The job's last runs (at most 20, newest first), as the leaders that ran them recorded them. */
  @Get(':name/history')
  async history(
    @Param('name') job: string,
    @Query('election') election?: string,
  ): Promise<{ job: string; runs: JobRun[] }> {
    const name = election === undefined ? undefined : parseElection(election, this.service.elections);
    try {
      return { job, runs: await this.service.jobHistory(job, { election: name }) };
    } catch (error) {
      throw jobControlHttpError(error, `the history of ${job} could not be read`);
    }
  }

  /** `{ reason?, election? }`: the leader skips the job's scheduled runs from its next renewal on. */
  @Post(':name/pause')
  @HttpCode(HttpStatus.ACCEPTED)
  async pause(@Param('name') job: string, @Body() body: unknown): Promise<JobCommandAccepted> {
    const { election, reason } = parseJobCommandBody(body, this.service.elections);
    try {
      await this.service.pauseJob(job, { election, reason });
    } catch (error) {
      throw jobControlHttpError(error, `the pause of ${job} could not be recorded`);
    }
    return { ...this.accepted(job, 'pause', election), ...(reason === undefined ? {} : { reason }) };
  }

  /** `{ election? }`: the leader runs the job on schedule again from its next renewal on. */
  @Post(':name/resume')
  @HttpCode(HttpStatus.ACCEPTED)
  async resume(@Param('name') job: string, @Body() body: unknown): Promise<JobCommandAccepted> {
    const { election } = parseJobCommandBody(body, this.service.elections);
    try {
      await this.service.resumeJob(job, { election });
    } catch (error) {
      throw jobControlHttpError(error, `the resume of ${job} could not be recorded`);
    }
    return this.accepted(job, 'resume', election);
  }

  /** `{ election? }`: the leader runs the job once at its next renewal, even while it is paused. */
  @Post(':name/run-now')
  @HttpCode(HttpStatus.ACCEPTED)
  async runNow(@Param('name') job: string, @Body() body: unknown): Promise<JobCommandAccepted> {
    const { election } = parseJobCommandBody(body, this.service.elections);
    try {
      const id = await this.service.runJobNow(job, { election });
      return { ...this.accepted(job, 'run-now', election), id };
    } catch (error) {
      throw jobControlHttpError(error, `the run now of ${job} could not be recorded`);
    }
  }

  private accepted(job: string, command: JobCommandAccepted['command'], election?: string): JobCommandAccepted {
    return { job, command, election: election ?? null, requestedBy: this.service.identity };
  }
}
