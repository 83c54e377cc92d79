import { createHash } from 'node:crypto';
import { TICK_KEY_PREFIX } from '../election/state-keys.js';
import type { CronMetadata } from './cron-schedule.js';

/** One once-per-tick job: its key in the ledger and its schedule. */
export interface TickJob {
  /** The @Cron `name` option, else `Class.method`. */
  job: string;
  /** `Class.method`, for messages. */
  label: string;
  cron: CronMetadata;
  /** With `missed: 'catch-up'`: how old a missed tick may be and still run; unset: CATCH_UP_WINDOW_MS. */
  catchUpWindowMs?: number;
}

/** The job name of a once-per-tick method: the @Cron `name` option, else `Class.method`. */
export function tickJobName(cron: CronMetadata, label: string): string {
  return typeof cron.name === 'string' && cron.name !== '' ? cron.name : label;
}

/**
 * `tick:<job>` within the state keys' alphabet [A-Za-z0-9._:-] and 200 characters: other characters
 * escaped as `_xx`; a name too long is cut and suffixed with a hash of the whole, so it stays unique.
 */
export function tickKey(job: string): string {
  const escaped = job.replace(/[^A-Za-z0-9.:-]/g, (c) =>
    [...Buffer.from(c, 'utf8')].map((byte) => `_${byte.toString(16).padStart(2, '0')}`).join(''),
  );
  const key = `${TICK_KEY_PREFIX}${escaped}`;
  if (key.length <= 200) return key;
  return `${key.slice(0, 183)}-${createHash('sha256').update(job).digest('hex').slice(0, 16)}`;
}
