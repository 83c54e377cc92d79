import type { QueryResultRow } from 'pg';
import { LeaseLostError } from '../../shared/errors.js';
import { encodeLeaseMeta } from '../handover-support.js';
import type { Lease, RenewOptions, RenewWithOptions, RenewWithReply } from '../lease-store.js';
import { prepareRenewal, renewalReplyOf } from '../renew-with-support.js';
import { renewSeparately, type SqlRenewalParts } from '../sql-records-support.js';
import { stateLostError, withStateColumn } from '../state-support.js';
import { storeMessages as messages } from '../store.messages.js';
import type { Step } from '../store-support.js';
import type { FoldedRenewalParts, PostgresStatements } from './postgres-sql.js';
import { jsonb, NUL_ESCAPE } from './postgres-values.js';

type Query = <R extends QueryResultRow = QueryResultRow>(step: Step, text: string, values: unknown[]) => Promise<R[]>;

/** The folded statement's row: RETURNING term, and what was asked. */
interface FoldedRow extends QueryResultRow {
  term: number | string;
  handover?: unknown;
  records?: Record<string, unknown> | null;
}

export interface PostgresRenewalOptions extends SqlRenewalParts {
  sql: PostgresStatements;
  query: Query;
}

/**
 * The renewals of PostgresLeaseStore. `renew`: one `UPDATE … WHERE <our lease id and term, unexpired
 * by the server's clock>`, replacing the meta where the table has the handover columns. The folded
 * renewal (`renewWith`): ONE statement, one round trip — that UPDATE, which also sets the meta (as
 * renew does), merges the state entries (each as writeState stores it: same column, same
 * `{ value, term }` envelope) and brings back the pending handover request and the asked records
 * in its RETURNING, read from the row as the renewal left it. On a table of an earlier version that
 * lacks a column the statement names, the separate calls ({@link renewSeparately}).
 */
export class PostgresRenewal {
  constructor(private readonly o: PostgresRenewalOptions) {}

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const { store, calls, columns, sql, query } = this.o;
    const meta = jsonb(encodeLeaseMeta(store.name, options.meta), 'lease meta');
    const values = [lease.election, lease.leaseId, lease.term, options.leaseDurationMs];
    const rows = await calls.run(options.signal, (step) =>
      meta === undefined
        ? query(step, sql.renew, values)
        : columns.handover.preferred(
            step,
            () => query(step, sql.renewMeta, [...values, meta]),
            () => query(step, sql.renew, values),
          ),
    );
    if (rows.length === 0) throw new LeaseLostError(messages.leaseLost(lease.election));
  }

  async renewWith(lease: Lease, options: RenewWithOptions): Promise<RenewWithReply> {
    const { store, calls, columns, sql } = this.o;
    const meta = jsonb(encodeLeaseMeta(store.name, options.meta), 'lease meta');
    const asked = prepareRenewal(store, { state: true, handover: true, records: true }, lease, options);
    // jsonb cannot hold U+0000 (SQLSTATE 22P05): refused up front, as writeState does.
    if (asked.writes.some((write) => NUL_ESCAPE.test(write.entry))) {
      throw new TypeError(messages.state.notSerialisable(store.name, 'U+0000 in jsonb'));
    }
    const entries = `{${asked.writes.map((write) => `${JSON.stringify(write.key)}:${write.entry}`).join(',')}}`;
    const handoverMissing = columns.handover.knownMissing();
    // Without the handover columns (found missing, not addable) the meta is left out, as renew does.
    const parts: FoldedRenewalParts = {
      meta: meta !== undefined && !handoverMissing,
      state: asked.writes.length > 0,
      handover: asked.readHandover,
      records: asked.recordKeys.length > 0,
    };
    const values: unknown[] = [lease.election, lease.leaseId, lease.term, options.leaseDurationMs];
    if (parts.meta) values.push(meta);
    if (parts.state) values.push(entries);
    if (parts.records) values.push(asked.recordKeys);
    // A handover read the columns cannot answer fails as readHandover does, after the renewal.
    const rows =
      parts.handover && handoverMissing
        ? undefined
        : await calls.run(options.signal, (step) =>
            this.o.query<FoldedRow>(step, sql.renewWith(parts), values).catch((error: unknown) => {
              // "Unknown column": nothing was applied; which column is missing, only a guard can tell.
              if (columns.state.missing(error)) return undefined;
              throw error;
            }),
          );
    if (rows === undefined) {
      return renewSeparately(store, lease, options, asked, () => this.writeAll(lease, entries, options));
    }
    const [row] = rows;
    if (!row) throw new LeaseLostError(messages.leaseLost(lease.election));
    return renewalReplyOf(store, lease.election, asked, row.handover, (key) => row.records?.[key]);
  }

  /** The separate calls' state writes: all in one statement (which renews again: harmless). */
  private async writeAll(lease: Lease, entries: string, options: RenewWithOptions): Promise<void> {
    const { calls, columns, sql } = this.o;
    const text = sql.renewWith({ meta: false, state: true, handover: false, records: false });
    const values = [lease.election, lease.leaseId, lease.term, options.leaseDurationMs, entries];
    const rows = await calls.run(options.signal, (step) =>
      withStateColumn(step, columns.state, () => this.o.query(step, text, values)),
    );
    if (rows.length === 0) throw stateLostError(lease);
  }
}
