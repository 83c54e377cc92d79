import { HttpException, HttpStatus } from '@nestjs/common';
import { nestMessages as messages } from './nest.messages.js';

/** JSON body of the 503 a follower answers. `leaderId` is left out when `guard.exposeLeaderId` is false. */
export interface NotLeaderResponseBody {
  /** Always 503: a follower cannot serve a leader-only route, retry later (see `Retry-After`). */
  statusCode: 503;
  /** The status text. */
  error: 'Service Unavailable';
  /** Says that this replica does not lead the election. */
  message: string;
  /** The current leader, null when unknown (no leader yet, or this instance is stepping down). */
  leaderId?: string | null;
  /** Where to reach the leader (its `advertise` value), when it publishes one and `exposeLeaderId` is on. */
  leaderAdvertise?: string;
  /** The election that decided (with several elections per app). */
  election?: string;
}

/**
 * The 503 of a follower (thrown by {@link LeaderOnlyGuard}, and by a `@LeaderOnly` route handler
 * reached without its consent). An `HttpException`, so Nest's and your exception filters handle it.
 */
export class NotLeaderException extends HttpException {
  /**
   * @param leaderId the leader to name in the body, null when unknown; undefined leaves it out
   * (`guard.exposeLeaderId: false`).
   * @param leaderAdvertise where to reach that leader (its `advertise` option), when known.
   */
  constructor(election: string, leaderId?: string | null, leaderAdvertise?: string) {
    const body: NotLeaderResponseBody = {
      statusCode: HttpStatus.SERVICE_UNAVAILABLE,
      error: 'Service Unavailable',
      message: messages.notLeader(election),
      election,
    };
    if (leaderId !== undefined) body.leaderId = leaderId;
    if (leaderAdvertise !== undefined) body.leaderAdvertise = leaderAdvertise;
    super(body, HttpStatus.SERVICE_UNAVAILABLE);
  }
}
