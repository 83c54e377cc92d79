import { decodeLeaseMeta } from './handover-support.js';
import type { AcquireResult, LeaseInfo } from './lease-store.js';
import type { Step } from './store-support.js';

/**
 * What the SQL stores (PostgreSQL, MySQL) share of the handover capability: the in-place migration
 * of the handover columns ({@link HandoverColumns}), and the reading of a lease row, as their read
 * and acquire statements report it, into a LeaseInfo or a refused acquire.
 */

/** How long columns found missing (and not addable) count as missing before a statement looks again. */
export const HANDOVER_COLUMNS_RECHECK_MS = 60_000;

export interface HandoverColumnsOptions {
  /** The driver's "unknown column" error (PostgreSQL 42703, MySQL ER_BAD_FIELD_ERROR). */
  missing(error: unknown): boolean;
  /** Adds the columns in place: idempotent and race-safe (see `onceUntilDone`). */
  migrate(): Promise<void>;
  createTable: boolean;
  /** The fatal error naming the migration to run, for createTable: false. */
  missingError(): Error;
}

/**
 * The handover columns of a SQL store's table (meta, reservation, pending request), which a table
 * made by a version before handover lacks. Like the state column (`withStateColumn`), the store adds
 * them in place the first time a statement finds them missing, when createTable is on. Unlike it,
 * the lease statements (acquire, read, renew with meta, release with a reservation) never fail for
 * want of them: when they cannot be added (createTable off, no ALTER permission) those run the
 * previous version's statement instead, so an upgrade never costs leadership; such a replica then
 * behaves like one of the previous version (no meta, ignores reservations), which the safety rules
 * allow. The handover request calls fail loudly instead, naming the migration. Once found missing,
 * the columns count as missing for {@link HANDOVER_COLUMNS_RECHECK_MS}: a follower polling an
 * unmigrated table does not send a failing statement per poll, and a migration run meanwhile by an
 * operator is picked up within that time.
 */
export class HandoverColumns {
  private missingUntil = Number.NEGATIVE_INFINITY;
  /** Why the columns are missing: the migration's failure, or the fatal "run the migration" error. */
  private failure?: () => unknown;

  constructor(private readonly options: HandoverColumnsOptions) {}

  /** `work` if the columns are there (added on the way when they can be), else `legacy`. */
  async preferred<T>(step: Step, work: () => Promise<T>, legacy: () => Promise<T>): Promise<T> {
    if (this.knownMissing()) return legacy();
    try {
      return await work();
    } catch (error) {
      if (!this.options.missing(error)) throw error;
      const added = await this.add(error);
      step();
      return added ? work() : legacy();
    }
  }

  /** `work`, which needs the columns: added on the way when they can be, else the failure. */
  async required<T>(step: Step, work: () => Promise<T>): Promise<T> {
    if (this.knownMissing()) throw this.failure?.();
    try {
      return await work();
    } catch (error) {
      if (!this.options.missing(error)) throw error;
      if (!(await this.add(error))) throw this.failure?.();
      step();
      return work();
    }
  }

  /** Found missing (and not addable) within the last {@link HANDOVER_COLUMNS_RECHECK_MS}: a statement naming them would fail. */
  knownMissing(): boolean {
    return performance.now() < this.missingUntil;
  }

  private async add(cause: unknown): Promise<boolean> {
    if (this.options.createTable) {
      try {
        await this.options.migrate();
        return true;
      } catch (error) {
        // E.g. no permission to ALTER: the store's classifier names the grant.
        this.failure = () => error;
      }
    } else {
      this.failure = () => Object.assign(this.options.missingError(), { cause });
    }
    this.missingUntil = performance.now() + HANDOVER_COLUMNS_RECHECK_MS;
    return false;
  }
}

/** A lease row as the SQL stores' read and acquire statements report it. */
export interface LeaseRowView {
  term: number | string;
  /** A boolean (PostgreSQL) or 0/1 (MySQL). */
  held: boolean | number | string | null;
  holder: string | null;
  /** Only when the row's current lease wrote it (absent on a table without the columns). */
  meta?: unknown;
  /** Only while the reservation lasts and the row's current lease made it. */
  reserved_for?: string | null;
  /** Until the holder's expiry, or the reservation's end, by the server's clock. */
  expires_in_ms?: number | string | null;
}

function isHeld(row: LeaseRowView): boolean {
  return Number(row.held) === 1;
}

function reservedFor(row: LeaseRowView): string | undefined {
  return !isHeld(row) && row.reserved_for != null ? row.reserved_for : undefined;
}

/** What read() answers: meta while held, the reservation while free. */
export function leaseInfoOf(row: LeaseRowView | undefined): LeaseInfo {
  if (!row) return { held: false, term: 0 };
  const term = Number(row.term);
  if (!isHeld(row)) {
    const reserved = reservedFor(row);
    return reserved === undefined ? { held: false, term } : { held: false, term, reservedFor: reserved };
  }
  const meta = decodeLeaseMeta(row.meta);
  const holder = row.holder ?? '';
  return meta === undefined ? { held: true, holder, term } : { held: true, holder, term, meta };
}

/** Whether an acquire by `identity` is refused without trying: held, or reserved for someone else. */
export function refusesAcquire(row: LeaseRowView, identity: string): boolean {
  const reserved = reservedFor(row);
  return isHeld(row) || (reserved !== undefined && reserved !== identity);
}

/** A refused acquire: the holder and its meta, or the reservation; the remaining time as a hint. */
export function refusalOf(row: LeaseRowView): AcquireResult {
  const info = leaseInfoOf(row);
  const expiresInMs = row.expires_in_ms == null ? Number.NaN : Number(row.expires_in_ms);
  const hint = Number.isFinite(expiresInMs) && (info.held || info.reservedFor !== undefined);
  return {
    acquired: false,
    ...(info.holder !== undefined && { holder: info.holder }),
    term: info.term,
    ...(hint && { expiresInMs }),
    ...(info.meta !== undefined && { meta: info.meta }),
    ...(info.reservedFor !== undefined && { reservedFor: info.reservedFor }),
  };
}
