import { LeaderElectionService, NoLeaderError } from '@leaderlease/nestjs';
import type { HandoverRequest } from '@leaderlease/nestjs/store';
import {
  BadRequestException,
  Body,
  ConflictException,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  type MessageEvent,
  Post,
  ServiceUnavailableException,
  Sse,
} from '@nestjs/common';
import { map, type Observable } from 'rxjs';
import { parseHandoverBody } from './handover.request.js';
import { LeadershipFeed } from './leadership.feed.js';

export interface HandoverAccepted {
  election: string;
  /** Who led as this replica last saw it; null when it had not seen the new leader yet (the store had one). */
  from: string | null;
  /** Who should lead next; null: any other replica. */
  to: string | null;
  requestedBy: string;
}

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

  /**
   * `{ election, to? }`: asks the leader of `election`, on whichever replica it runs, to drain its
   * work and hand over to `to` (without it: to any other replica). Any replica takes the request:
   * it is recorded in the lease store, where the leader reads it at its next renewal. 202 once
   * recorded (the move itself follows within a renew interval plus the drain); 409 when nobody
   * leads the election or the store shows `to` already leading it; 400 for an unknown election or a
   * bad body.
   */
  @Post('handover')
  @HttpCode(HttpStatus.ACCEPTED)
  async handover(@Body() body: unknown): Promise<HandoverAccepted> {
    const { election: name, to, reason } = parseHandoverBody(body, this.election.elections);
    const election = this.election.election(name);
    // This replica's view may lag (another replica may have taken the election since its last poll):
    // the store decides whether anyone leads and whether `to` already does.
    const from = election.leaderId ?? null;
    let recorded: HandoverRequest | undefined;
    try {
      recorded = await this.election.requestHandover({
        election: election.election,
        to,
        reason: reason ?? `POST /leader/handover on ${this.election.identity}`,
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof TypeError) throw new BadRequestException(message);
      // The store is read before the request is written: the leader may have gone meanwhile.
      if (error instanceof NoLeaderError) throw this.nobodyLeads(election.election);
      throw new ServiceUnavailableException(`the handover request could not be recorded: ${message}`);
    }
    if (!recorded) throw new ConflictException(`${to} already leads "${election.election}": nothing to hand over`);
    return { election: election.election, from, to: to ?? null, requestedBy: this.election.identity };
  }

  private nobodyLeads(election: string): ConflictException {
    return new ConflictException(
      `nobody leads "${election}" right now, so there is nothing to hand over; a leader is elected within the failover bound`,
    );
  }
}
