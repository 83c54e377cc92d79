import {
  type CanActivate,
  type ExecutionContext,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  Logger,
} from '@nestjs/common';
import { LEADER_ELECTION_SERVICE, LOGGER_CONTEXT } from './leader-election.constants.js';
import { messages } from './leader-election.messages.js';
import { LeaderElectionService } from './leader-election.service.js';

/** JSON body of the 503 a follower answers. `leaderId` is left out when `guard.exposeLeaderId` is false. */
export interface NotLeaderResponseBody {
  statusCode: 503;
  error: 'Service Unavailable';
  message: string;
  /** The current leader, null when unknown (no leader yet, or this instance is stepping down). */
  leaderId?: string | null;
}

/**
 * Lets a request through on the leader only. Followers (and a leader that is stepping down)
 * answer HTTP 503 with `Retry-After`, `X-Leader-Id` and a JSON body naming the leader.
 *
 * Put on routes by `@LeaderOnly()`; also usable alone: `@UseGuards(LeaderOnlyGuard)` on a
 * controller or route, or app-wide (`{ provide: APP_GUARD, useClass: LeaderOnlyGuard }`), where it
 * guards every route — health endpoints included, so prefer controller scope.
 *
 * Non-HTTP calls (RPC, WebSocket, GraphQL) are refused by returning false: the transport then
 * throws its own Forbidden error (RpcException / WsException / ForbiddenException). Throwing a
 * look-alike of those classes would not work: their exception filters test `instanceof`, and this
 * library must not depend on @nestjs/microservices or @nestjs/websockets.
 */
@Injectable()
export class LeaderOnlyGuard implements CanActivate {
  private readonly logger = new Logger(LOGGER_CONTEXT);

  constructor(@Inject(LEADER_ELECTION_SERVICE) private readonly election: LeaderElectionService) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.election.isLeader()) return true;
    const type = context.getType<string>();
    if (type !== 'http') {
      this.logger.debug(messages.refusedNonHttp(type, this.election.election));
      return false;
    }
    const response = context.switchToHttp().getResponse<HeaderSink>();
    for (const [name, value] of Object.entries(notLeaderHeaders(this.election))) setHeader(response, name, value);
    throw notLeaderException(this.election);
  }
}

/** The 503 of a follower; also thrown by a `@LeaderOnly` route handler reached without the guard's consent. */
export function notLeaderException(election: LeaderElectionService): HttpException {
  const body: NotLeaderResponseBody = {
    statusCode: HttpStatus.SERVICE_UNAVAILABLE,
    error: 'Service Unavailable',
    message: messages.notLeader(election.election),
  };
  if (election.options.guard.exposeLeaderId) body.leaderId = otherLeader(election) ?? null;
  return new HttpException(body, HttpStatus.SERVICE_UNAVAILABLE);
}

function notLeaderHeaders(election: LeaderElectionService): Record<string, string> {
  const headers: Record<string, string> = {};
  const { guard } = election.options;
  if (guard.retryAfter) {
    // A new leader exists within about one retry interval (sooner on a graceful handover).
    headers['Retry-After'] = String(Math.max(1, Math.ceil(election.timings.retryIntervalMs / 1000)));
  }
  const leaderId = guard.exposeLeaderId ? otherLeader(election) : undefined;
  // Header values must be visible ASCII; an exotic identity is still named in the body.
  if (leaderId !== undefined && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(leaderId))
    headers['X-Leader-Id'] = leaderId;
  return headers;
}

/** While stepping down we still hold the lease, but pointing clients at ourselves would be wrong. */
function otherLeader(election: LeaderElectionService): string | undefined {
  const leaderId = election.leaderId;
  return leaderId === election.identity ? undefined : leaderId;
}

interface HeaderSink {
  header?(name: string, value: string): unknown;
  setHeader?(name: string, value: string): unknown;
}

function setHeader(response: HeaderSink, name: string, value: string): void {
  // Express and Fastify both have header(); a bare Node response only setHeader().
  if (typeof response.header === 'function') response.header(name, value);
  else response.setHeader?.(name, value);
}
