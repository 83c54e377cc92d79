import { BadRequestException } from '@nestjs/common';
import { bodyFields, parseElection } from './request-body.js';

/** The body of `POST /jobs/:name/pause`, `…/resume` and `…/run-now` (all optional). */
export interface JobCommandBody {
  /** The job's election; absent: whichever election runs a job of that name. */
  election?: string;
  /** Why it is paused (pause only): shown on every replica's status page and logged by the leader. */
  reason?: string;
}

/**
 * The checked body; 400 names what is wrong. An empty or blank reason counts as none, as an empty
 * text field on the page sends it; the library checks the rest (its length and characters) and its
 * TypeError becomes a 400 too.
 */
export function parseJobCommandBody(body: unknown, elections: readonly string[]): JobCommandBody {
  const { election, reason } = bodyFields(body, '{ "election": "<name>", "reason": "<text>" }');
  const parsed: JobCommandBody = {};
  if (election !== undefined && election !== null && election !== '') {
    parsed.election = parseElection(election, elections);
  }
  if (reason !== undefined && reason !== null) {
    if (typeof reason !== 'string') throw new BadRequestException('"reason" must be a string');
    if (reason.trim() !== '') parsed.reason = reason.trim();
  }
  return parsed;
}
