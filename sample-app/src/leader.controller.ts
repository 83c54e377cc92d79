import { Controller, Get } from '@nestjs/common';
import { LeaderElectionService } from 'nestjs-leader-election';

@Controller('leader')
export class LeaderController {
  constructor(private readonly election: LeaderElectionService) {}

  /** Who leads, with which term, and how this instance's elector is doing. Served by every instance. */
  @Get()
  status() {
    return this.election.status();
  }
}
