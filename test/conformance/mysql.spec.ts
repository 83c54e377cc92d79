// MySqlLeaseStore against the machine's MariaDB (MYSQL_URL): the shared conformance suite, then
// what is specific to it: table creation, session time zones, pools it must not close, auth,
// permission and network failures, and an acquire that lands after its caller gave up.
import { randomBytes, randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import mysql from 'mysql2/promise';
import { LeaseLostError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import { leaseStoreConformance } from '../../lib/store.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import {
  MySqlLeaseStore,
  mysqlHandoverMigrationSql,
  mysqlLeaseStateMigrationSql,
  mysqlLeaseTableSql,
  mysqlRecordsMigrationSql,
} from '../../lib/stores/mysql/mysql.store.js';
import { mysqlStatements } from '../../lib/stores/mysql/mysql-sql.js';
import { expectUnreachableIsTransient, MYSQL_URL, uniqueName } from '../setup/servers.js';
import { storeBehindBlackHoleProxy } from '../support/black-hole-proxy.js';
import { portOf, storeBehindReplyLosingProxy, withPort } from '../support/reply-losing-proxy.js';
import { describeBlackHoleStopConformance } from './black-hole.conformance.js';
import { describeSqlHandoverUpgrade, type SqlHandoverUpgradeTarget } from './sql-handover-upgrade.js';
import { describeSqlRecords } from './sql-records.conformance.js';
import { expectMalformedConnectionRefused } from './store-spec-helpers.js';

const LEASE_MS = 1_000;
const table = uniqueName('le_my');
/** Every table a test may have created; dropped at the end. */
const tables = new Set([table]);

function freshTable(prefix = 'le_my_fresh'): string {
  const name = uniqueName(prefix);
  tables.add(name);
  return name;
}

const signal = (ms = 10_000) => AbortSignal.timeout(ms);

async function withConnection<T>(work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = await mysql.createConnection(MYSQL_URL);
  try {
    return await work(connection);
  } finally {
    await connection.end();
  }
}

afterAll(async () => {
  await withConnection(async (connection) => {
    for (const name of tables) await connection.query(`DROP TABLE IF EXISTS \`${name}\``);
  });
});

const conformanceCases = leaseStoreConformance({
  leaseDurationMs: LEASE_MS,
  leaderState: true,
  handover: true,
  records: true,
  renewWith: true,
  createStore: () => new MySqlLeaseStore({ connection: MYSQL_URL, table }),
  createStoreInFreshNamespace: () => new MySqlLeaseStore({ connection: MYSQL_URL, table: freshTable() }),
  createReplyLosingStore: () =>
    storeBehindReplyLosingProxy(
      portOf(MYSQL_URL, 3306),
      (port) => new MySqlLeaseStore({ connection: withPort(MYSQL_URL, port), table }),
    ),
  createBlackHoledStore: () =>
    storeBehindBlackHoleProxy(
      portOf(MYSQL_URL, 3306),
      (port) => new MySqlLeaseStore({ connection: withPort(MYSQL_URL, port), table }),
    ),
});

describe('LeaseStore conformance: MySqlLeaseStore', () => {
  for (const c of conformanceCases)
    (c.skip ? test.skip : c.concurrent ? test.concurrent : test)(c.name, c.run, c.timeoutMs);
});

const handoverUpgrade: SqlHandoverUpgradeTarget = {
  previousVersionTable: async () => {
    const name = freshTable('le_my_ho');
    // Exactly as the version before handover created it (with the state column).
    await withConnection((connection) =>
      connection.query(`CREATE TABLE \`${name}\` (election VARCHAR(200) NOT NULL, holder VARCHAR(256) NOT NULL,
        lease_id CHAR(36) NOT NULL, term BIGINT NOT NULL, expires_at DATETIME(3) NOT NULL, state JSON NULL,
        PRIMARY KEY (election)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`),
    );
    return name;
  },
  store: (name, options) => new MySqlLeaseStore({ connection: MYSQL_URL, table: name, ...options }),
  previousVersion: (name) => {
    // Its take (INSERT … ON DUPLICATE KEY UPDATE) and reads as it sent them; renew and release are today's.
    const sql = mysqlStatements(`\`${name}\``);
    const run = (text: string, values: unknown[]) =>
      withConnection(async (connection) => (await connection.query(text, values))[0] as Record<string, unknown>[]);
    return {
      acquire: async (election, identity, ms = 30_000) => {
        const leaseId = randomUUID();
        await run(sql.legacy.take, [election, identity, leaseId, ms]);
        const [row] = await run(sql.legacy.mine, [leaseId, election]);
        return Number(row?.mine) === 1 ? { election, holder: identity, leaseId, term: Number(row?.term) } : undefined;
      },
      renew: async (lease) =>
        (
          (await run(sql.renew, [30_000, lease.election, lease.leaseId, lease.term])) as unknown as {
            affectedRows: number;
          }
        ).affectedRows === 1,
      release: (lease) => run(sql.release, [lease.election, lease.leaseId, lease.term, lease.term]),
      read: async (election) => {
        const [row] = await run(sql.legacy.read, [election]);
        return { holder: String(row?.holder), held: Number(row?.held) === 1 };
      },
    };
  },
  handoverColumns: (name) =>
    withConnection(async (connection) => {
      const [rows] = await connection.query(
        "SELECT column_name AS c FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name IN ('meta', 'meta_lease_id', 'reserved_for', 'reserved_until', 'handover') ORDER BY column_name",
        [name],
      );
      return (rows as { c: string }[]).map((row) => row.c);
    }),
  migrate: (name) => withConnection((connection) => connection.query(mysqlHandoverMigrationSql(name))),
  migrationName: 'mysqlHandoverMigrationSql()',
  secondRunRefusedWith: 'ER_DUP_FIELDNAME',
};

describeSqlHandoverUpgrade('MySqlLeaseStore', handoverUpgrade);

describeSqlRecords('MySqlLeaseStore', {
  store: handoverUpgrade.store,
  freshTable: () => freshTable('le_my_rec'),
  previousVersionTable: async () => {
    const name = freshTable('le_my_rec_old');
    // Exactly as the version before shared records created it (mysqlLeaseTableSql() without records).
    await withConnection((connection) =>
      connection.query(`CREATE TABLE \`${name}\` (election VARCHAR(200) NOT NULL, holder VARCHAR(256) NOT NULL,
        lease_id CHAR(36) NOT NULL, term BIGINT NOT NULL, expires_at DATETIME(3) NOT NULL, state JSON NULL,
        meta JSON NULL, meta_lease_id CHAR(36) NULL, reserved_for VARCHAR(256) NULL, reserved_until DATETIME(3) NULL,
        handover JSON NULL, PRIMARY KEY (election)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`),
    );
    return name;
  },
  previousVersion: handoverUpgrade.previousVersion,
  hasRecordsColumn: (name) =>
    withConnection(async (connection) => {
      const [rows] = await connection.query(
        "SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'records'",
        [name],
      );
      return (rows as unknown[]).length === 1;
    }),
  migrate: (name) => withConnection((connection) => connection.query(mysqlRecordsMigrationSql(name))),
  migrationName: 'mysqlRecordsMigrationSql()',
  secondRunRefusedWith: 'ER_DUP_FIELDNAME',
  lockingRow: (name, election, during) =>
    withConnection(async (connection) => {
      await connection.beginTransaction();
      try {
        await connection.query(`SELECT 1 FROM \`${name}\` WHERE election = ? FOR UPDATE`, [election]);
        await during();
      } finally {
        await connection.commit();
      }
    }),
});

describeBlackHoleStopConformance('MySqlLeaseStore', () => ({
  leaseDurationMs: 3_000,
  createBlackHoledStore: () =>
    storeBehindBlackHoleProxy(
      portOf(MYSQL_URL, 3306),
      (port) => new MySqlLeaseStore({ connection: withPort(MYSQL_URL, port), table }),
    ),
}));

describe('MySqlLeaseStore specifics', () => {
  const stores: LeaseStore[] = [];
  const store = (options: ConstructorParameters<typeof MySqlLeaseStore>[0]) => {
    const created = new MySqlLeaseStore(options);
    stores.push(created);
    return created;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close?.()));
  });

  it('creates its table on first use, with the documented layout', async () => {
    const name = freshTable();
    const columns = () =>
      withConnection(async (connection) => {
        const [rows] = await connection.query(
          'SELECT column_name AS c FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position',
          [name],
        );
        return (rows as { c: string }[]).map((row) => row.c);
      });
    expect(await columns()).toEqual([]);
    expect(await store({ connection: MYSQL_URL, table: name }).read('e', { signal: signal() })).toEqual({
      held: false,
      term: 0,
    });
    expect(await columns()).toEqual([
      'election',
      'holder',
      'lease_id',
      'term',
      'expires_at',
      'state',
      'meta',
      'meta_lease_id',
      'reserved_for',
      'reserved_until',
      'handover',
      'records',
    ]);
  });

  /** The table exactly as the version before leader state created it. */
  const previousVersionTableSql = (name: string) => `CREATE TABLE \`${name}\` (
    election VARCHAR(200) NOT NULL, holder VARCHAR(256) NOT NULL, lease_id CHAR(36) NOT NULL, term BIGINT NOT NULL,
    expires_at DATETIME(3) NOT NULL, PRIMARY KEY (election)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
  const stateColumns = (name: string) =>
    withConnection(async (connection) => {
      const [rows] = await connection.query(
        "SELECT column_name AS c FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'state'",
        [name],
      );
      return (rows as { c: string }[]).length;
    });

  it('upgrade: a table of the previous version gains the state column in place, once, with two instances migrating at once', async () => {
    const name = freshTable('le_my_old');
    await withConnection((connection) => connection.query(previousVersionTableSql(name)));
    const [a, b] = [store({ connection: MYSQL_URL, table: name }), store({ connection: MYSQL_URL, table: name })];
    const taken = await a.acquire({ election: 'e', identity: 'a', leaseDurationMs: 30_000, signal: signal() });
    if (!taken.acquired) throw new Error('not acquired');
    expect(await stateColumns(name)).toBe(0);
    // Both instances find the column missing at the same moment and add it: neither fails.
    const [, read] = await Promise.all([
      a.writeState(taken.lease, { cursor: 7 }, { signal: signal() }),
      b.readState('e', { signal: signal() }),
    ]);
    expect(read === undefined || read.term === taken.lease.term).toBe(true);
    expect(await stateColumns(name)).toBe(1);
    expect(await b.readState('e', { signal: signal() })).toEqual({ value: { cursor: 7 }, term: taken.lease.term });
    expect(await b.read('e', { signal: signal() })).toEqual({ held: true, holder: 'a', term: taken.lease.term });
    // A replica of the previous version inserts rows without naming the column: they read as empty.
    await withConnection((connection) =>
      connection.query(
        `INSERT INTO \`${name}\` (election, holder, lease_id, term, expires_at) VALUES ('old', 'old', UUID(), 1, UTC_TIMESTAMP(3))`,
      ),
    );
    expect(await b.readState('old', { signal: signal() })).toBeUndefined();
  });

  it('upgrade with createTable: false: state calls name the migration to run, then work', async () => {
    const name = freshTable('le_my_old');
    await withConnection((connection) => connection.query(previousVersionTableSql(name)));
    const s = store({ connection: MYSQL_URL, table: name, createTable: false });
    const taken = await s.acquire({ election: 'e', identity: 'a', leaseDurationMs: 30_000, signal: signal() });
    if (!taken.acquired) throw new Error('not acquired');
    const folded = { leaseDurationMs: 30_000, signal: signal(), writeState: [{ key: 'state', value: 1 }] };
    for (const call of [
      s.writeState(taken.lease, 1, { signal: signal() }),
      s.readState('e', { signal: signal() }),
      s.renewWith(taken.lease, folded),
    ]) {
      const error = await call.catch((e: unknown) => e);
      expect(error).toMatchObject({ kind: 'fatal' });
      expect((error as Error).message).toContain('mysqlLeaseStateMigrationSql()');
    }
    await withConnection((connection) => connection.query(mysqlLeaseStateMigrationSql(name)));
    await s.writeState(taken.lease, 1, { signal: signal() });
    // Writing the same entry again changes no row, and is still a success.
    await s.writeState(taken.lease, 1, { signal: signal() });
    expect(await s.readState('e', { signal: signal() })).toEqual({ value: 1, term: taken.lease.term });
  });

  it('uses a table created beforehand from mysqlLeaseTableSql() with createTable: false', async () => {
    const name = freshTable();
    const s = store({ connection: MYSQL_URL, table: name, createTable: false });
    await expect(s.read('e', { signal: signal() })).rejects.toMatchObject({ kind: 'fatal' });
    await withConnection((connection) => connection.query(mysqlLeaseTableSql(name)));
    expect(
      (await s.acquire({ election: 'e', identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() })).acquired,
    ).toBe(true);
  });

  it('shared records: compare-and-set answers alike with and without CLIENT_FOUND_ROWS on the pool', async () => {
    for (const flags of [[], ['-FOUND_ROWS']]) {
      const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 2, flags });
      try {
        const s = new MySqlLeaseStore({ client: pool, table });
        const election = `rows-${randomBytes(4).toString('hex')}`;
        const write = (value: unknown, ifVersion: string | null) =>
          s.writeRecord(election, 'jobs', value, { ifVersion, signal: signal() });
        const version = async () => (await s.readRecord(election, 'jobs', { signal: signal() }))?.version ?? 'none';
        // On an election without a row, then on its row.
        expect(await write(1, null)).toBe(true);
        expect(await write(2, null)).toBe(false);
        expect(await s.writeRecord(election, 'other', 1, { ifVersion: null, signal: signal() })).toBe(true);
        const first = await version();
        // The same value again is a write (a new version), which no count of unchanged rows may hide.
        expect(await write(1, first)).toBe(true);
        expect(await write(1, first)).toBe(false);
        expect(await write(3, await version())).toBe(true);
        expect(await s.readRecord(election, 'jobs', { signal: signal() })).toMatchObject({ value: 3 });
        await s.close();
      } finally {
        await pool.end();
      }
    }
  });

  it('a folded renewal is one query on a pool with multipleStatements (its own pool has it), two without; alike with and without CLIENT_FOUND_ROWS', async () => {
    for (const multipleStatements of [true, false]) {
      for (const flags of [[], ['-FOUND_ROWS']]) {
        const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 2, flags, multipleStatements });
        let queries = 0;
        const counted = new Proxy(pool, {
          get(target, key) {
            if (key !== 'query') return Reflect.get(target, key);
            return (options: Parameters<typeof pool.query>[0]) => {
              queries += 1;
              return target.query(options);
            };
          },
        });
        try {
          const s = new MySqlLeaseStore({ client: counted, table });
          const election = `fold-${randomBytes(4).toString('hex')}`;
          const taken = await s.acquire({ election, identity: 'a', leaseDurationMs: 30_000, signal: signal() });
          if (!taken.acquired) throw new Error('not acquired');
          const { lease } = taken;
          const renewWith = (
            extra: Omit<Parameters<typeof s.renewWith>[1], 'signal' | 'leaseDurationMs'>,
            on = lease,
          ) => s.renewWith(on, { leaseDurationMs: 30_000, signal: signal(), ...extra });
          expect(await s.writeRecord(election, 'jobs', { n: 1 }, { ifVersion: null, signal: signal() })).toBe(true);
          const record = await s.readRecord(election, 'jobs', { signal: signal() });
          for (const value of ['first', 'second']) {
            queries = 0;
            const reply = await renewWith({
              meta: { leaderships: 1 },
              writeState: [{ key: 'state', value }],
              readHandover: true,
              readRecords: ['jobs', 'absent'],
            });
            expect(queries).toBe(multipleStatements ? 1 : 2);
            expect(reply).toEqual({ handover: null, records: { jobs: record, absent: null } });
          }
          expect(await s.readState(election, { signal: signal() })).toEqual({ value: 'second', term: lease.term });
          expect(await s.read(election, { signal: signal() })).toMatchObject({ meta: { leaderships: 1 } });
          // Renewals in the same millisecond change no row: without FOUND_ROWS none counts, all are ours.
          await Promise.all(
            Array.from({ length: 5 }, () => renewWith({ writeState: [{ key: 'state', value: 'second' }] })),
          );
          // A stranger's lease id: refused, nothing written.
          const stranger = { ...lease, holder: 'stranger', leaseId: randomUUID() };
          await expect(renewWith({ writeState: [{ key: 'state', value: 'x' }] }, stranger)).rejects.toBeInstanceOf(
            LeaseLostError,
          );
          expect(await s.readState(election, { signal: signal() })).toEqual({ value: 'second', term: lease.term });
          await s.release(lease, { signal: signal() });
          await expect(renewWith({ readHandover: true })).rejects.toBeInstanceOf(LeaseLostError);
          await s.close();
        } finally {
          await pool.end();
        }
      }
    }
  });

  it("judges expiry in UTC, whatever each session's time zone", async () => {
    // Two replicas whose sessions run in time zones 14 hours apart must still agree.
    const east = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 1 });
    const west = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 1 });
    east.pool.on('connection', (connection) => void connection.query("SET time_zone = '+09:00'"));
    west.pool.on('connection', (connection) => void connection.query("SET time_zone = '-05:00'"));
    try {
      // West writes, east judges: with session-local NOW() east would find the lease 14 h expired.
      const [a, b] = [new MySqlLeaseStore({ client: west, table }), new MySqlLeaseStore({ client: east, table })];
      const election = `tz-${randomBytes(4).toString('hex')}`;
      const lease = await a.acquire({ election, identity: 'west', leaseDurationMs: 5_000, signal: signal() });
      expect(lease.acquired).toBe(true);
      expect(await b.acquire({ election, identity: 'east', leaseDurationMs: 5_000, signal: signal() })).toMatchObject({
        acquired: false,
        holder: 'west',
      });
      expect(await b.read(election, { signal: signal() })).toMatchObject({ held: true, holder: 'west' });
      if (lease.acquired) await a.release(lease.lease, { signal: signal() });
      expect((await b.acquire({ election, identity: 'east', leaseDurationMs: 5_000, signal: signal() })).acquired).toBe(
        true,
      );
    } finally {
      await east.end();
      await west.end();
    }
  });

  it('never closes a pool the user passed in; close() is idempotent', async () => {
    const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 2 });
    try {
      const s = new MySqlLeaseStore({ client: pool, table });
      expect(await s.read('user-pool', { signal: signal() })).toEqual({ held: false, term: 0 });
      await s.close();
      await s.close();
      const [rows] = await pool.query('SELECT 1 AS one');
      expect(rows).toEqual([{ one: 1 }]);
      await expect(s.read('user-pool', { signal: signal() })).rejects.toBeInstanceOf(TransientLeaseStoreError);
    } finally {
      await pool.end();
    }
  });

  it('a wrong password is a FatalLeaseStoreError whose message and cause hold no password', async () => {
    const url = MYSQL_URL.replace('mysql://root@', 'mysql://root:s3cret-pw@');
    const error = await store({ connection: url, table })
      .read('e', { signal: signal() })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'fatal', name: 'FatalLeaseStoreError' });
    expect((error as Error).message).toContain('ER_ACCESS_DENIED_ERROR');
    expect(inspect(error, { depth: 10 })).not.toContain('s3cret-pw');
  });

  it('an account without privileges gets a FatalLeaseStoreError naming the grants it needs', async () => {
    const user = uniqueName('le_limited');
    await withConnection(async (connection) => {
      await connection.query(`CREATE USER '${user}'@'127.0.0.1'`);
      await connection.query(`CREATE USER '${user}'@'localhost'`);
    });
    try {
      const url = MYSQL_URL.replace('mysql://root@', `mysql://${user}@`);
      // No privilege at all in the database: refused at login.
      const denied = await store({ connection: url, table })
        .read('e', { signal: signal() })
        .catch((e: unknown) => e);
      expect(denied).toMatchObject({ kind: 'fatal' });
      expect((denied as Error).message).toContain('ER_DBACCESS_DENIED_ERROR');
      // SELECT only: reading works, taking the lease is refused with the grants to add.
      await withConnection(async (connection) => {
        await connection.query(`GRANT SELECT ON \`${table}\` TO '${user}'@'127.0.0.1', '${user}'@'localhost'`);
      });
      const s = store({ connection: url, table });
      expect(await s.read('e', { signal: signal() })).toEqual({ held: false, term: 0 });
      const error = await s
        .acquire({ election: 'e', identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ kind: 'fatal' });
      expect((error as Error).message).toMatch(/ER_TABLEACCESS_DENIED_ERROR.*GRANT SELECT, INSERT, UPDATE/);
    } finally {
      await withConnection(async (connection) => {
        await connection.query(`DROP USER IF EXISTS '${user}'@'127.0.0.1', '${user}'@'localhost'`);
      });
    }
  });

  it('an unreachable or silent server is a TransientLeaseStoreError within the signal', () =>
    expectUnreachableIsTransient((port) => store({ connection: `mysql://root@127.0.0.1:${port}/test`, table })));

  it('an acquire that lands after its caller gave up is released, not left behind', async () => {
    const election = `late-${randomBytes(4).toString('hex')}`;
    const [late, other] = [store({ connection: MYSQL_URL, table }), store({ connection: MYSQL_URL, table })];
    // Create the row, then lock it so the next takeover waits inside the server.
    const first = await other.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!first.acquired) throw new Error('not acquired');
    await other.release(first.lease, { signal: signal() });
    await withConnection(async (blocker) => {
      await blocker.query('START TRANSACTION');
      await blocker.query(`SELECT * FROM \`${table}\` WHERE election = ? FOR UPDATE`, [election]);
      const startedAt = performance.now();
      // A long lease: if it were left behind, nobody could take it for a minute.
      const aborted = late.acquire({ election, identity: 'late', leaseDurationMs: 60_000, signal: signal(300) });
      await expect(aborted).rejects.toBeInstanceOf(TransientLeaseStoreError);
      expect(performance.now() - startedAt).toBeLessThan(2_000);
      await blocker.query('COMMIT');
    });
    const deadline = performance.now() + 5_000;
    let result = await other.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
    while (!result.acquired && performance.now() < deadline) {
      expect(result).toMatchObject({ holder: 'late' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      result = await other.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
    }
    expect(result.acquired).toBe(true);
  });

  it('beaten between its read and its take by a holder that has released since, an acquire tries once more', async () => {
    const election = `race-${randomBytes(4).toString('hex')}`;
    const rival = store({ connection: MYSQL_URL, table });
    const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 2 });
    let interleaved = false;
    // The first take of this store's acquire waits while the rival takes the lease; the rival
    // releases once that take has changed nothing, before this store checks what it won.
    const racing = new Proxy(pool, {
      get(target, key) {
        if (key !== 'query') return Reflect.get(target, key);
        return async (options: { sql: string }) => {
          if (interleaved || !options.sql.startsWith('INSERT')) return target.query(options);
          interleaved = true;
          const won = await rival.acquire({ election, identity: 'rival', leaseDurationMs: 60_000, signal: signal() });
          if (!won.acquired) throw new Error('rival not acquired');
          const taken = await target.query(options);
          await rival.release(won.lease, { signal: signal() });
          return taken;
        };
      },
    });
    try {
      const s = new MySqlLeaseStore({ client: racing, table });
      const result = await s.acquire({ election, identity: 'me', leaseDurationMs: LEASE_MS, signal: signal() });
      expect(interleaved).toBe(true);
      expect(result).toMatchObject({ acquired: true, lease: { holder: 'me', term: 2 } });
    } finally {
      await pool.end();
    }
  });

  it('refuses a malformed connection URI at construction, naming the option, never echoing it', () => {
    for (const bad of ['mysql://app:s3cret-pw@db:port/test', 'db:3306 s3cret-pw', 'postgres://app:s3cret-pw@db/test']) {
      expectMalformedConnectionRefused(() => new MySqlLeaseStore({ connection: bad }), 'connection', 's3cret-pw');
      expectMalformedConnectionRefused(
        () => new MySqlLeaseStore({ connection: { uri: bad } }),
        'connection.uri',
        's3cret-pw',
      );
    }
    for (const good of [MYSQL_URL, 'mariadb://app:pw@db:3307/test']) {
      expect(() => new MySqlLeaseStore({ connection: good })).not.toThrow();
    }
  });

  it('rejects table names that are not plain identifiers', () => {
    for (const bad of ['', 'x`; DROP TABLE y; --', '1abc', 'a'.repeat(65), 'with space']) {
      expect(() => new MySqlLeaseStore({ connection: MYSQL_URL, table: bad })).toThrow(TypeError);
    }
    expect(() => new MySqlLeaseStore({} as never)).toThrow(TypeError);
  });
});
