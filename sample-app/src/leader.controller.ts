import { Controller, Get, type MessageEvent, Sse } from '@nestjs/common';
import { LeaderElectionService } from 'nestjs-leader-election';
import { map, type Observable } from 'rxjs';
import { LeadershipFeed } from './leadership.feed.js';

@Controller('leader')
export class LeaderController {
  constructor(
    private readonly election: LeaderElectionService,
    private readonly feed: LeadershipFeed,
  ) {}

  /**
   * Who leads, with which term, and how this instance's elector is doing (the default election,
   * as before), plus `elections`: every election of this app. Served by every instance.
   */
  @Get()
  status() {
    return { ...this.election.status(), elections: this.feed.snapshot().elections };
  }

  /** Server-Sent Events: a snapshot at once, then on every leadership change. The status page listens here. */
  @Sse('events')
  events(): Observable<MessageEvent> {
    return this.feed.snapshots().pipe(map((snapshot) => ({ type: 'snapshot', data: snapshot })));
  }
}
