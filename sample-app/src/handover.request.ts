import { BadRequestException } from '@nestjs/common';
import { bodyFields, parseElection } from './request-body.js';

/** The body of `POST /leader/handover`. */
export interface HandoverBody {
  /** The election to hand over; default: the default election. */
  election?: string;
  /** The replica (its INSTANCE_ID) that should lead next; absent or null: any other replica. */
  to?: string;
  /** Logged by the leader that honours it. */
  reason?: string;
}

/** The checked body; 400 names what is wrong. */
export function parseHandoverBody(body: unknown, elections: readonly string[]): HandoverBody {
  const { election, to, reason } = bodyFields(body, '{ "election": "<name>", "to": "<replica>" }');
  const parsed: HandoverBody = {};
  if (election !== undefined) parsed.election = parseElection(election, elections);
  if (to !== undefined && to !== null && to !== '') {
    if (typeof to !== 'string') throw new BadRequestException('"to" must be a replica identity (a string)');
    parsed.to = to;
  }
  if (reason !== undefined) {
    if (typeof reason !== 'string') throw new BadRequestException('"reason" must be a string');
    parsed.reason = reason;
  }
  return parsed;
}
