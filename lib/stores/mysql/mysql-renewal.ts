import type { RowDataPacket } from 'mysql2/promise';
import { LeaseLostError } from '../../shared/errors.js';
import { encodeLeaseMeta } from '../handover-support.js';
import type { Lease, RenewOptions, RenewWithOptions, RenewWithReply } from '../lease-store.js';
import { prepareRenewal, renewalReplyOf } from '../renew-with-support.js';
import { renewSeparately, type SqlRenewalParts } from '../sql-records-support.js';
import { stateLostError, withStateColumn } from '../state-support.js';
import { storeMessages as messages } from '../store.messages.js';
import type { Step } from '../store-support.js';
import { affectedRows, type MySqlClient } from './mysql-client.js';
import type { MySqlStatements } from './mysql-sql.js';

/** One statement and its parameters. */
interface Statement {
  text: string;
  values: unknown[];
}

/** The SELECT after a folded renewal: `mine`, and what was asked (`handover`, `r0`, `r1`, …). */
type RenewedRow = RowDataPacket & { mine: number | string | null; handover?: unknown };

export interface MySqlRenewalOptions extends SqlRenewalParts {
  sql: MySqlStatements;
  client: MySqlClient;
}

/**
 * The renewals of MySqlLeaseStore. `renew`: one `UPDATE … WHERE <our lease id and term, unexpired by
 * the server's clock>`, replacing the meta where the table has the handover columns. The folded
 * renewal (`renewWith`): that UPDATE, which also sets the meta and merges the state entries (each
 * as writeState stores it: same column, same `{ value, term }` envelope), then a SELECT of the row
 * it left (the pending handover request, the asked records). MySQL has no UPDATE … RETURNING, so
 * both go in ONE `query` call, one round trip, where the pool allows several statements per query
 * (our own pool does; a user's pool only if its owner enabled `multipleStatements`), else two
 * round trips. On a table of an earlier version that lacks a column a statement names, the
 * separate calls ({@link renewSeparately}).
 */
export class MySqlRenewal {
  constructor(private readonly o: MySqlRenewalOptions) {}

  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const { store, calls, columns, sql, client } = this.o;
    const meta = encodeLeaseMeta(store.name, options.meta);
    const ours = [lease.election, lease.leaseId, lease.term];
    const renewed = await calls.run(options.signal, async (step) => {
      const plain = () => client.query(sql.renew, [options.leaseDurationMs, ...ours]);
      const result =
        meta === undefined
          ? await plain()
          : await columns.handover.preferred(
              step,
              () => client.query(sql.renewMeta, [meta, options.leaseDurationMs, ...ours]),
              plain,
            );
      if (affectedRows(result) > 0) return true;
      // Without FOUND_ROWS a renewal in the same millisecond changes nothing and counts 0 rows.
      step();
      return (await client.query(sql.stillMine, ours)).length > 0;
    });
    if (!renewed) throw new LeaseLostError(messages.leaseLost(lease.election));
  }

  async renewWith(lease: Lease, options: RenewWithOptions): Promise<RenewWithReply> {
    const { store, calls, columns, sql } = this.o;
    const meta = encodeLeaseMeta(store.name, options.meta);
    const asked = prepareRenewal(store, { state: true, handover: true, records: true }, lease, options);
    const handoverMissing = columns.handover.knownMissing();
    // Without the handover columns (found missing, not addable) the meta is left out, as renew does.
    const withMeta = meta !== undefined && !handoverMissing;
    const update = this.update(lease, options, asked.writes, withMeta ? meta : undefined);
    const select: Statement = {
      text: sql.renewed({ handover: asked.readHandover, records: asked.recordKeys.length }),
      values: [lease.leaseId, lease.term, ...asked.recordKeys.map(path), lease.election],
    };
    // A handover read the columns cannot answer fails as readHandover does, after the renewal.
    const folded =
      asked.readHandover && handoverMissing
        ? undefined
        : await calls.run(options.signal, (step) =>
            this.fold(step, update, select).catch((error: unknown) => {
              // "Unknown column": which one is missing, only a guard can tell (an UPDATE that applied
              // before the SELECT failed is renewed and written again by the separate calls: alike).
              if (columns.state.missing(error)) return undefined;
              throw error;
            }),
          );
    if (folded === undefined) {
      const writeAll = () => this.writeAll(lease, options, this.update(lease, options, asked.writes, undefined));
      return renewSeparately(store, lease, options, asked, writeAll);
    }
    const { applied, row } = folded;
    if (!applied) throw new LeaseLostError(messages.leaseLost(lease.election));
    const entries = new Map(asked.recordKeys.map((key, i) => [key, row?.[`r${i}`]]));
    return renewalReplyOf(store, lease.election, asked, row?.handover, (key) => entries.get(key));
  }

  private update(
    lease: Lease,
    options: RenewWithOptions,
    writes: { key: string; entry: string }[],
    meta: string | undefined,
  ): Statement {
    return {
      text: this.o.sql.renewWith({ meta: meta !== undefined, writes: writes.length }),
      values: [
        ...(meta === undefined ? [] : [meta]),
        ...writes.flatMap((write) => [path(write.key), write.entry]),
        options.leaseDurationMs,
        lease.election,
        lease.leaseId,
        lease.term,
      ],
    };
  }

  /**
   * The UPDATE, then the SELECT of the row it left: one `query` (one round trip) when the pool
   * allows several statements, else two. Applied: a row counted (matched with FOUND_ROWS, changed
   * without), or the row ours and unexpired right after — without FOUND_ROWS a renewal in the same
   * millisecond changes nothing, and a lease not ours or expired can never become ours again.
   */
  private async fold(step: Step, update: Statement, select: Statement) {
    const { client } = this.o;
    let header: unknown;
    let rows: RenewedRow[];
    if (client.multipleStatements()) {
      const text = `${update.text};\n${select.text}`;
      [header, rows] = (await client.query(text, [...update.values, ...select.values])) as [unknown, RenewedRow[]];
    } else {
      header = await client.query(update.text, update.values);
      step();
      rows = await client.query<RenewedRow>(select.text, select.values);
    }
    const [row] = rows;
    return { applied: affectedRows(header) > 0 || Number(row?.mine) === 1, row };
  }

  /** The separate calls' state writes: all in one UPDATE (which renews again: harmless). */
  private async writeAll(lease: Lease, options: RenewWithOptions, update: Statement): Promise<void> {
    const { calls, columns, sql } = this.o;
    const select = {
      text: sql.renewed({ handover: false, records: 0 }),
      values: [lease.leaseId, lease.term, lease.election],
    };
    const written = await calls.run(options.signal, (step) =>
      withStateColumn(step, columns.state, async () => (await this.fold(step, update, select)).applied),
    );
    if (!written) throw stateLostError(lease);
  }
}

/** The JSON path of a state or record key: no escaping needed, the key rules allow no quote or backslash. */
function path(key: string): string {
  return `$."${key}"`;
}
