import { BadRequestException } from '@nestjs/common';

/** The body of `POST /leader/handover`. */
export interface HandoverBody {
  /** The election to hand over; default: the default election. */
  election?: string;
  /** The replica (its INSTANCE_ID) that should lead next; absent or null: any other replica. */
  to?: string;
  /** Logged by the leader that honours it. */
  reason?: string;
}

/** Checks the JSON body by hand (the sample app has no validation pipe); 400 names what is wrong. */
export function parseHandoverBody(body: unknown, elections: readonly string[]): HandoverBody {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequestException('expected a JSON object: { "election": "<name>", "to": "<replica>" }');
  }
  const { election, to, reason } = body as Record<string, unknown>;
  const parsed: HandoverBody = {};
  if (election !== undefined) {
    if (typeof election !== 'string' || !elections.includes(election)) {
      throw new BadRequestException(
        `unknown election ${JSON.stringify(election)}: this app runs ${elections.map((e) => `"${e}"`).join(', ')}`,
      );
    }
    parsed.election = election;
  }
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
