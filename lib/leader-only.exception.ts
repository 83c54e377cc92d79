import { HttpException, HttpStatus } from '@nestjs/common';
import { messages } from './leader-election.messages.js';

/** JSON body of the 503 a follower answers. `leaderId` is left out when `guard.exposeLeaderId` is false. */
export interface NotLeaderResponseBody {
  statusCode: 503;
  error: 'Service Unavailable';
  message: string;
  /** The current leader, null when unknown (no leader yet, or this instance is stepping down). */
  leaderId?: string | null;
}

/**
 * The 503 of a follower (thrown by {@link LeaderOnlyGuard}, and by a `@LeaderOnly` route handler
 * reached without its consent). An `HttpException`, so Nest's and your exception filters handle it.
 */
export class NotLeaderException extends HttpException {
  /**
   * @param leaderId the leader to name in the body, null when unknown; undefined leaves it out
   * (`guard.exposeLeaderId: false`).
   */
  constructor(election: string, leaderId?: string | null) {
    const body: NotLeaderResponseBody = {
      statusCode: HttpStatus.SERVICE_UNAVAILABLE,
      error: 'Service Unavailable',
      message: messages.notLeader(election),
    };
    if (leaderId !== undefined) body.leaderId = leaderId;
    super(body, HttpStatus.SERVICE_UNAVAILABLE);
  }
}
