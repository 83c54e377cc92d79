import { LeaderOnly } from '@leaderlease/nestjs';
import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';

@Injectable()
export class JobsService {
  private readonly logger = new Logger(JobsService.name);
  ticks = 0;

  @Cron(CronExpression.EVERY_SECOND)
  @LeaderOnly()
  tick() {
    this.ticks++;
    this.logger.log(`tick ${this.ticks}`);
  }
}
