import { createHash } from 'node:crypto';
import { electionMessages as messages } from './election.messages.js';

// The keys of leader state an app may not write: the public API's rule, not the stores' (a store
// writes any key it is given, the ledger's own through the same call).

/** The once-per-tick ledger's keys: refused by the public writeState, so an app cannot overwrite them. */
export const TICK_KEY_PREFIX = 'tick:';

/** Job control's leader state (run history, the catalogue of jobs), written by the leader only (issue 28). */
export const JOB_KEY_PREFIX = 'jobs:';

/** The leader's catalogue of its election's leader-only jobs (names and schedules), for the CLI and followers. */
export const JOB_CATALOGUE_KEY = `${JOB_KEY_PREFIX}catalogue`;

/** Leader state keys hold at most this many characters of [A-Za-z0-9._:-] (lib/stores/state-support.ts). */
const MAX_STATE_KEY_LENGTH = 200;

/** A write through the public API (service, handle, Elector, testing kit): `tick:` and `jobs:` keys are the library's. */
export function checkUserStateKey(key: string | undefined): void {
  if (typeof key !== 'string') return;
  if (key.startsWith(TICK_KEY_PREFIX)) throw new TypeError(messages.stateKeyReserved(key));
  if (key.startsWith(JOB_KEY_PREFIX)) throw new TypeError(messages.jobs.stateKeyReserved(key));
}

/** The run history of `job` (its last runs, newest first) in leader state. */
export function jobHistoryKey(job: string): string {
  return escapedStateKey(`${JOB_KEY_PREFIX}history:`, job);
}

/**
 * `prefix` + `name` within the state keys' alphabet [A-Za-z0-9._:-] and 200 characters: other
 * characters escaped as `_xx` (UTF-8 bytes); a name too long is cut and suffixed with a hash of the
 * whole, so it stays unique. The prefix must already be of the alphabet.
 */
export function escapedStateKey(prefix: string, name: string): string {
  const escaped = name.replace(/[^A-Za-z0-9.:-]/g, (c) =>
    [...Buffer.from(c, 'utf8')].map((byte) => `_${byte.toString(16).padStart(2, '0')}`).join(''),
  );
  const key = `${prefix}${escaped}`;
  if (key.length <= MAX_STATE_KEY_LENGTH) return key;
  return `${key.slice(0, MAX_STATE_KEY_LENGTH - 17)}-${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;
}
