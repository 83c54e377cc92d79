import { LeaderElectionService, LeaderOnly } from '@leaderlease/nestjs';
import { Controller, Get, Post } from '@nestjs/common';
import { JobsService } from './jobs.service';

@Controller()
export class AppController {
  constructor(
    private readonly jobs: JobsService,
    private readonly election: LeaderElectionService,
  ) {}

  @Get('status')
  status() {
    return { identity: this.election.identity, leader: this.election.isLeader(), ticks: this.jobs.ticks };
  }

  @Post('admin/reindex')
  @LeaderOnly()
  reindex() {
    return { reindexed: true, by: this.election.identity };
  }
}
