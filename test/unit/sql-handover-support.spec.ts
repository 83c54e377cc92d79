// The SQL stores' gate for the handover columns, on Jest's fake timers (they move performance.now):
// when the columns are missing and cannot be added, lease statements fall back to the previous
// version's and request calls fail, for a minute without asking the server again; then they look again.
import { jest } from '@jest/globals';
import {
  HANDOVER_COLUMNS_RECHECK_MS,
  HandoverColumns,
  leaseInfoOf,
  refusalOf,
} from '../../lib/stores/sql-handover-support.js';

const missingColumn = Object.assign(new Error('column "meta" does not exist'), { code: '42703' });
const step = () => undefined;

function gate(createTable: boolean, migrate: () => Promise<void> = async () => undefined) {
  const columns = new HandoverColumns({
    missing: (error) => (error as { code?: string }).code === '42703',
    migrate,
    createTable,
    missingError: () => new Error('run handoverMigrationSql()'),
  });
  return { columns, advance: (ms: number) => jest.advanceTimersByTime(ms) };
}

describe('HandoverColumns', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('createTable on: migrates, then runs the statement again', async () => {
    let present = false;
    const { columns } = gate(true, async () => {
      present = true;
    });
    const work = async () => {
      if (!present) throw missingColumn;
      return 'new';
    };
    expect(await columns.preferred(step, work, async () => 'legacy')).toBe('new');
    expect(await columns.required(step, work)).toBe('new');
  });

  it('createTable off: falls back for lease statements, fails request calls naming the migration, and looks again after a minute', async () => {
    let present = false;
    let sent = 0;
    const work = async () => {
      sent += 1;
      if (!present) throw missingColumn;
      return 'new';
    };
    const { columns, advance } = gate(false);
    expect(await columns.preferred(step, work, async () => 'legacy')).toBe('legacy');
    await expect(columns.required(step, work)).rejects.toMatchObject({
      message: 'run handoverMigrationSql()',
      cause: missingColumn,
    });
    // Known missing: nothing more is sent for a minute.
    expect(sent).toBe(1);
    present = true;
    advance(HANDOVER_COLUMNS_RECHECK_MS - 1);
    expect(await columns.preferred(step, work, async () => 'legacy')).toBe('legacy');
    expect(sent).toBe(1);
    advance(1);
    expect(await columns.preferred(step, work, async () => 'legacy')).toBe('new');
    expect(await columns.required(step, work)).toBe('new');
  });

  it('a migration that fails (no ALTER permission) leaves leases on the previous statements; request calls get its error', async () => {
    const denied = Object.assign(new Error('must be owner of table'), { code: '42501' });
    const { columns } = gate(true, async () => {
      throw denied;
    });
    const work = async (): Promise<string> => {
      throw missingColumn;
    };
    expect(await columns.preferred(step, work, async () => 'legacy')).toBe('legacy');
    await expect(columns.required(step, work)).rejects.toBe(denied);
  });

  it('any other error passes through', async () => {
    const { columns } = gate(true);
    const other = Object.assign(new Error('boom'), { code: '57014' });
    await expect(
      columns.preferred(
        step,
        () => Promise.reject(other),
        async () => 'legacy',
      ),
    ).rejects.toBe(other);
  });
});

describe('lease row view', () => {
  it('meta while held, the reservation while free, the remaining time as a hint', () => {
    const held = { term: '3', held: true, holder: 'a', meta: '{"leaderships":2}', expires_in_ms: '900.5' };
    expect(leaseInfoOf(held)).toEqual({ held: true, holder: 'a', term: 3, meta: { leaderships: 2 } });
    expect(refusalOf(held)).toEqual({
      acquired: false,
      holder: 'a',
      term: 3,
      expiresInMs: 900.5,
      meta: { leaderships: 2 },
    });
    const reserved = { term: 3, held: 0, holder: 'a', reserved_for: 'b', expires_in_ms: 4000 };
    expect(leaseInfoOf(reserved)).toEqual({ held: false, term: 3, reservedFor: 'b' });
    expect(refusalOf(reserved)).toEqual({ acquired: false, term: 3, reservedFor: 'b', expiresInMs: 4000 });
    expect(leaseInfoOf(undefined)).toEqual({ held: false, term: 0 });
    expect(refusalOf({ term: 4, held: false, holder: 'a', expires_in_ms: null })).toEqual({ acquired: false, term: 4 });
  });
});
