import { performance } from 'node:perf_hooks';
import { TransientLeaseStoreError } from '../shared/errors.js';
import type { CallOptions } from '../stores/lease-store.js';
import { callOptions, pause } from './call-options.js';
import { cliMessages } from './cli.messages.js';
import type { CliOutput } from './cli-output.js';

/** How a `--wait` polls: every `pollIntervalMs` for at most `waitTimeoutMs`, each read bounded by `timeoutMs`. */
export interface PollOptions {
  waitTimeoutMs: number;
  pollIntervalMs: number;
  timeoutMs: number;
}

/**
 * Reads with `read` every interval until `done` says so or the wait times out (then `last` is the
 * last value read). A read that fails transiently is reported once per distinct message and retried;
 * anything else ends the command.
 */
export async function pollUntil<T>(
  options: PollOptions,
  read: (call: CallOptions) => Promise<T>,
  done: (value: T) => boolean,
  output: CliOutput,
): Promise<{ done: true; value: T; waitedMs: number } | { done: false; last?: T }> {
  const startedAt = performance.now();
  const remaining = () => options.waitTimeoutMs - (performance.now() - startedAt);
  let last: T | undefined;
  let lastFailure: string | undefined;
  while (remaining() > 0) {
    await pause(Math.min(options.pollIntervalMs, remaining()));
    try {
      last = await read(callOptions(Math.max(1, Math.min(options.timeoutMs, remaining()))));
    } catch (error) {
      if (!(error instanceof TransientLeaseStoreError)) throw error;
      if (error.message !== lastFailure) output.err(cliMessages.pollFailed(error.message));
      lastFailure = error.message;
      continue;
    }
    if (done(last)) return { done: true, value: last, waitedMs: Math.round(performance.now() - startedAt) };
  }
  return { done: false, last };
}
