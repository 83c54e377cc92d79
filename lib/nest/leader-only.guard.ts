import { type CanActivate, type ExecutionContext, Inject, Injectable, Logger } from '@nestjs/common';
import type { ElectionHandle } from '../leadership/election.handle.js';
import type {
  LeaderElectionModuleOptions,
  LeaderOnlyGuardOptions,
} from './interfaces/leader-election-options.interface.js';
import { LEADER_ELECTION_SERVICE, LEADER_ONLY_OPTIONS_METADATA, LOGGER_CONTEXT } from './leader-election.constants.js';
import { resolveGuardOptions } from './leader-election.options.js';
import { LeaderElectionService } from './leader-election.service.js';
import { InjectLeaderElectionOptions } from './leader-election-options.decorator.js';
import { NotLeaderException } from './leader-only.exception.js';
import { nestMessages as messages } from './nest.messages.js';

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
  private readonly options: Required<LeaderOnlyGuardOptions>;

  constructor(
    @InjectLeaderElectionOptions() options: LeaderElectionModuleOptions,
    @Inject(LEADER_ELECTION_SERVICE) private readonly election: LeaderElectionService,
  ) {
    this.options = resolveGuardOptions(options.guard);
  }

  canActivate(context: ExecutionContext): boolean {
    const handle = this.handleOf(context);
    if (handle.isLeader()) return true;
    const type = context.getType<string>();
    if (type !== 'http') {
      this.logger.debug(messages.refusedNonHttp(type, handle.election));
      return false;
    }
    const response = context.switchToHttp().getResponse<HeaderSink>();
    for (const [name, value] of Object.entries(this.notLeaderHeaders(handle))) setHeader(response, name, value);
    throw this.notLeaderException(handle);
  }

  /**
   * The 503 this guard answers with for `handle`'s election (default: the default election),
   * naming the leader and where to reach it unless `guard.exposeLeaderId` is false.
   */
  notLeaderException(handle: ElectionHandle = this.election.election()): NotLeaderException {
    if (!this.options.exposeLeaderId) return new NotLeaderException(handle.election);
    const leaderId = otherLeader(handle);
    return new NotLeaderException(handle.election, leaderId ?? null, leaderId && handle.leaderAdvertise);
  }

  /** The election of the route (its `@LeaderOnly('name')`), else the default one. */
  private handleOf(context: ExecutionContext): ElectionHandle {
    const handler = typeof context.getHandler === 'function' ? context.getHandler() : undefined;
    const declared: { options?: { election?: string } } | undefined =
      handler && Reflect.getMetadata(LEADER_ONLY_OPTIONS_METADATA, handler);
    return this.election.election(declared?.options?.election);
  }

  private notLeaderHeaders(handle: ElectionHandle): Record<string, string> {
    const headers: Record<string, string> = {};
    if (this.options.retryAfter) {
      // A new leader exists within about one retry interval (sooner on a graceful handover).
      headers['Retry-After'] = String(Math.max(1, Math.ceil(handle.timings.retryIntervalMs / 1000)));
    }
    if (!this.options.exposeLeaderId) return headers;
    const leaderId = otherLeader(handle);
    // Header values must be visible ASCII; an exotic identity is still named in the body.
    if (leaderId !== undefined && HEADER_VALUE.test(leaderId)) headers['X-Leader-Id'] = leaderId;
    const advertise = leaderId && handle.leaderAdvertise;
    if (advertise && HEADER_VALUE.test(advertise)) headers['X-Leader-Advertise'] = advertise;
    return headers;
  }
}

const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** While stepping down we still hold the lease, but pointing clients at ourselves would be wrong. */
function otherLeader(handle: ElectionHandle): string | undefined {
  const leaderId = handle.leaderId;
  return leaderId === handle.identity ? undefined : leaderId;
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
