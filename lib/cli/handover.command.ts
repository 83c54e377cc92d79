import { randomUUID } from 'node:crypto';
import type { HandoverRequest, LeaseInfo, LeaseStore } from '../stores/lease-store.js';
import { callOptions } from './call-options.js';
import { cliMessages } from './cli.messages.js';
import { CliError, ExitCode } from './cli-errors.js';
import type { CliOutput } from './cli-output.js';
import { pollUntil } from './poll.js';

export interface HandoverOptions {
  election: string;
  /** The identity that should lead next; absent: any other replica. */
  to?: string;
  reason: string;
  /** `cli:<os user>@<host>`. */
  requestedBy: string;
  /** Bound of each store call. */
  timeoutMs: number;
  /** Poll until the lease moved (to `to`, when given), at most `waitTimeoutMs`. */
  wait: boolean;
  waitTimeoutMs: number;
  pollIntervalMs: number;
  json: boolean;
  /** Wall clock of `requestedAt`. */
  now?: () => number;
}

/** `handover --json`: one document, printed once the command is done. */
export interface HandoverDocument {
  election: string;
  /** The leader the request is addressed to. */
  from: { holder: string; term: number };
  /** The recorded request; null when nothing was recorded (`to` already leads). */
  request: HandoverRequest | null;
  /** With --wait: the new leader, or null when the wait timed out. */
  newLeader?: { holder: string; term: number; waitedMs: number } | null;
}

/**
 * `handover`: records a request that the current leader of the election hands its lease over.
 * The leader acts on it (the store only keeps it); with `wait`, follows the lease until it moved.
 */
export async function handoverCommand(
  store: LeaseStore,
  options: HandoverOptions,
  output: CliOutput,
): Promise<ExitCode> {
  const { election, to } = options;
  if (typeof store.requestHandover !== 'function') {
    throw new CliError(
      ExitCode.unsupported,
      cliMessages.unsupported(store.name, 'record handover requests', 'requestHandover'),
    );
  }
  const info = await store.read(election, callOptions(options.timeoutMs));
  if (!info.held || info.holder === undefined) {
    throw new CliError(ExitCode.noLeader, cliMessages.noLeader(election, info.reservedFor));
  }
  const from = { holder: info.holder, term: info.term };
  if (to === from.holder) {
    print(options, output, { election, from, request: null }, cliMessages.alreadyLeads(election, to, from.term));
    return ExitCode.ok;
  }
  const request: HandoverRequest = {
    election,
    id: randomUUID(),
    term: from.term,
    ...(to === undefined ? {} : { to }),
    requestedBy: options.requestedBy,
    reason: options.reason,
    requestedAt: (options.now ?? Date.now)(),
  };
  await store.requestHandover(request, callOptions(options.timeoutMs));
  const requested = cliMessages.handoverRequested(election, from.holder, from.term, to, request.id);
  if (!options.wait) {
    print(options, output, { election, from, request }, requested);
    return ExitCode.ok;
  }
  if (!options.json) output.out(requested);
  output.err(cliMessages.waiting(election, options.waitTimeoutMs));
  const outcome = await waitForNewLeader(store, options, from.holder, output);
  if (outcome.moved) {
    const newLeader = { holder: outcome.info.holder as string, term: outcome.info.term, waitedMs: outcome.waitedMs };
    print(
      options,
      output,
      { election, from, request, newLeader },
      cliMessages.newLeader(election, newLeader.holder, newLeader.term, newLeader.waitedMs),
    );
    return ExitCode.ok;
  }
  if (options.json) output.out(JSON.stringify({ election, from, request, newLeader: null }, null, 2));
  const last = outcome.info;
  throw new CliError(
    ExitCode.waitTimedOut,
    cliMessages.waitTimedOut(
      election,
      options.waitTimeoutMs,
      last?.held ? last.holder : undefined,
      last?.term ?? from.term,
    ),
  );
}

/** Polls the lease until someone other than `from` holds it (`options.to`, when given) or the wait times out. */
async function waitForNewLeader(
  store: LeaseStore,
  options: HandoverOptions,
  from: string,
  output: CliOutput,
): Promise<{ moved: true; info: LeaseInfo; waitedMs: number } | { moved: false; info?: LeaseInfo }> {
  const outcome = await pollUntil(
    { waitTimeoutMs: options.waitTimeoutMs, pollIntervalMs: options.pollIntervalMs, timeoutMs: options.timeoutMs },
    (call) => store.read(options.election, call),
    (info) =>
      info.held &&
      info.holder !== undefined &&
      info.holder !== from &&
      (options.to === undefined || info.holder === options.to),
    output,
  );
  return outcome.done
    ? { moved: true, info: outcome.value, waitedMs: outcome.waitedMs }
    : { moved: false, info: outcome.last };
}

function print(options: HandoverOptions, output: CliOutput, document: HandoverDocument, line: string): void {
  output.out(options.json ? JSON.stringify(document, null, 2) : line);
}
