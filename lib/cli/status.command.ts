import { ELECTION_PATTERN } from '../election/elector-options.js';
import { priorityOf } from '../election/priority.js';
import { TransientLeaseStoreError } from '../shared/errors.js';
import type { HandoverRequest, LeaseInfo, LeaseMeta, LeaseStore } from '../stores/lease-store.js';
import { callOptions, formatDuration, pause } from './call-options.js';
import { cliMessages } from './cli.messages.js';
import { CliError, ExitCode } from './cli-errors.js';
import type { CliOutput } from './cli-output.js';
import { renderTable } from './table.js';

export interface StatusOptions {
  /** The elections to show; empty: every election the store lists. */
  elections: readonly string[];
  /** Bound of each store call. */
  timeoutMs: number;
  json: boolean;
  /** Refresh every `intervalMs` until `stop` fires. */
  watch: boolean;
  intervalMs: number;
  /** Ends `--watch` (Ctrl-C); the command then exits 0. */
  stop?: AbortSignal;
  /** Wall clock, for the age of a request (made with the requester's wall clock). */
  now?: () => number;
}

/** `status --json`: one document (with --watch, one per line and refresh). Absent values are null. */
export interface StatusDocument {
  store: string;
  /** When the store was read (ISO 8601, this machine's clock). */
  at: string;
  /** False when the store has no readHandover: `handover` is then null for every election. */
  handoverSupported: boolean;
  elections: ElectionStatus[];
}

export interface ElectionStatus {
  election: string;
  held: boolean;
  holder: string | null;
  term: number;
  /** The holder's advertised address (`meta.advertise`). */
  advertise: string | null;
  /** How many elections the holder leads (`meta.leaderships`). */
  leaderships: number | null;
  /** The holder's priority (`meta.priority`; 0 when it publishes none); null while free. */
  priority: number | null;
  /** The holder's whole meta, unknown fields included. */
  meta: LeaseMeta | null;
  /** While free: the identity a directed handover reserved the lease for. */
  reservedFor: string | null;
  /** Present only when the store reports it: ms until the lease expires unless renewed. */
  expiresInMs?: number;
  handover: HandoverStatus | null;
}

export interface HandoverStatus {
  id: string;
  /** The term the request was made for. */
  term: number;
  /** The identity asked for; null: any other replica. */
  to: string | null;
  requestedBy: string;
  reason: string;
  /** Epoch ms, the requester's clock. */
  requestedAt: number;
  ageMs: number;
  /** The request's term is not the current term: leadership moved since, no leader will act on it. */
  stale: boolean;
}

/** `status`: prints the elections once, or on every refresh with `watch`. */
export async function statusCommand(store: LeaseStore, options: StatusOptions, output: CliOutput): Promise<ExitCode> {
  for (;;) {
    let document: StatusDocument | undefined;
    try {
      document = await readStatus(store, options);
    } catch (error) {
      if (options.stop?.aborted) return ExitCode.ok;
      // While watching, an outage is something to show, not a reason to stop watching.
      if (!options.watch || !(error instanceof TransientLeaseStoreError)) throw error;
      output.err(cliMessages.watchFailed(error.message));
    }
    if (document) printStatus(document, options, output);
    if (!options.watch || !(await pause(options.intervalMs, options.stop))) return ExitCode.ok;
  }
}

async function readStatus(store: LeaseStore, options: StatusOptions): Promise<StatusDocument> {
  const call = () => callOptions(options.timeoutMs, options.stop);
  let elections = options.elections;
  if (elections.length === 0) {
    if (typeof store.listElections !== 'function') {
      throw new CliError(
        ExitCode.unsupported,
        cliMessages.unsupported(store.name, 'list its elections (pass --election)', 'listElections'),
      );
    }
    // Only elections: standby followers' candidate slots (`~standby.…`) are leases too.
    elections = (await store.listElections(call())).filter((name) => ELECTION_PATTERN.test(name));
  }
  const readHandover = store.readHandover?.bind(store);
  const now = options.now ?? Date.now;
  const rows = await Promise.all(
    elections.map(async (election) => {
      const [info, request] = await Promise.all([
        store.read(election, call()),
        readHandover ? readHandover(election, call()) : undefined,
      ]);
      return electionStatus(election, info, request, now());
    }),
  );
  return { store: store.name, at: new Date(now()).toISOString(), handoverSupported: !!readHandover, elections: rows };
}

function electionStatus(
  election: string,
  info: LeaseInfo,
  request: HandoverRequest | undefined,
  now: number,
): ElectionStatus {
  // `expiresInMs` is an optional field of LeaseInfo a store may add: shown only when present.
  const { expiresInMs } = info as LeaseInfo & { expiresInMs?: unknown };
  return {
    election,
    held: info.held,
    holder: info.held ? (info.holder ?? null) : null,
    term: info.term,
    advertise: info.meta?.advertise ?? null,
    leaderships: info.meta?.leaderships ?? null,
    priority: info.held ? priorityOf(info.meta) : null,
    meta: info.meta ?? null,
    reservedFor: info.held ? null : (info.reservedFor ?? null),
    ...(typeof expiresInMs === 'number' ? { expiresInMs } : {}),
    handover: request
      ? {
          id: request.id,
          term: request.term,
          to: request.to ?? null,
          requestedBy: request.requestedBy,
          reason: request.reason,
          requestedAt: request.requestedAt,
          ageMs: Math.max(0, now - request.requestedAt),
          stale: request.term !== info.term,
        }
      : null,
  };
}

function printStatus(document: StatusDocument, options: StatusOptions, output: CliOutput): void {
  if (options.json) {
    output.out(options.watch ? JSON.stringify(document) : JSON.stringify(document, null, 2));
    return;
  }
  if (options.watch) {
    // A terminal redraws in place; a pipe or file gets one dated block per refresh.
    const header = `${document.store} at ${document.at} (every ${options.intervalMs} ms, Ctrl-C to stop)`;
    output.out(output.isTTY ? `\x1b[2J\x1b[H${header}` : `\n${header}`);
  }
  output.out(document.elections.length === 0 ? cliMessages.noElections : statusTable(document));
}

function statusTable(document: StatusDocument): string {
  const withExpiry = document.elections.some((row) => row.expiresInMs !== undefined);
  // Only when a holder publishes a priority: a cluster that uses none sees the table as before.
  const withPriority = document.elections.some((row) => row.meta?.priority !== undefined);
  const header = [
    'ELECTION',
    'STATE',
    'HOLDER',
    'TERM',
    'ADVERTISE',
    'LEADS',
    ...(withPriority ? ['PRIORITY'] : []),
    ...(withExpiry ? ['EXPIRES IN'] : []),
    'HANDOVER',
  ];
  const rows = document.elections.map((row) => [
    row.election,
    row.held ? 'held' : row.reservedFor ? `free, reserved for ${row.reservedFor}` : 'free',
    row.holder ?? '-',
    String(row.term),
    row.advertise ?? '-',
    row.leaderships === null ? '-' : String(row.leaderships),
    ...(withPriority ? [row.priority === null ? '-' : String(row.priority)] : []),
    ...(withExpiry ? [row.expiresInMs === undefined ? '-' : formatDuration(row.expiresInMs)] : []),
    document.handoverSupported ? handoverText(row.handover) : 'n/a (store lacks readHandover)',
  ]);
  return renderTable([header, ...rows]);
}

function handoverText(request: HandoverStatus | null): string {
  if (!request) return '-';
  const text = `to ${request.to ?? 'any other replica'}, by ${request.requestedBy} (${request.reason}), ${formatDuration(request.ageMs)} ago`;
  return request.stale ? `STALE (for term ${request.term}) ${text}` : `${text}, term ${request.term}`;
}
