// PostgresLeaseStore against the machine's PostgreSQL (PG_URL): the shared conformance and push
// suites, then what is specific to it: table creation, clients it must not close, auth, permission
// and network failures, and an acquire that lands after its caller gave up.
import { randomBytes, randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import pg from 'pg';
import { FatalLeaseStoreError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import { leaseStoreConformance } from '../../lib/store.js';
import type { LeaseStore } from '../../lib/stores/lease-store.js';
import {
  PostgresLeaseStore,
  postgresHandoverMigrationSql,
  postgresLeaseStateMigrationSql,
  postgresLeaseTableSql,
  postgresRecordsMigrationSql,
} from '../../lib/stores/postgres/postgres.store.js';
import { postgresStatements } from '../../lib/stores/postgres/postgres-sql.js';
import { expectUnreachableIsTransient, PG_URL, uniqueName } from '../setup/servers.js';
import { storeBehindBlackHoleProxy } from '../support/black-hole-proxy.js';
import { portOf, storeBehindReplyLosingProxy, withPort } from '../support/reply-losing-proxy.js';
import { describeBlackHoleStopConformance } from './black-hole.conformance.js';
import { describePushHandoverConformance } from './push.conformance.js';
import { describeSqlHandoverUpgrade, type SqlHandoverUpgradeTarget } from './sql-handover-upgrade.js';
import { describeSqlRecords } from './sql-records.conformance.js';
import { expectMalformedConnectionRefused } from './store-spec-helpers.js';

const LEASE_MS = 1_000;
const table = uniqueName('le_pg');
const pushTable = uniqueName('le_pg_push');
/** Every table a test may have created; dropped at the end. */
const tables = new Set([table, pushTable]);

function freshTable(prefix = 'le_pg_fresh'): string {
  const name = uniqueName(prefix);
  tables.add(name);
  return name;
}

const signal = (ms = 10_000) => AbortSignal.timeout(ms);

async function withClient<T>(work: (client: pg.Client) => Promise<T>, url = PG_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  await withClient(async (client) => {
    for (const name of tables) await client.query(`DROP TABLE IF EXISTS "${name}"`);
  });
});

const conformanceCases = leaseStoreConformance({
  leaseDurationMs: LEASE_MS,
  leaderState: true,
  handover: true,
  records: true,
  renewWith: true,
  push: true,
  createStore: () => new PostgresLeaseStore({ connection: PG_URL, table }),
  createStoreInFreshNamespace: () => new PostgresLeaseStore({ connection: PG_URL, table: freshTable() }),
  createReplyLosingStore: () =>
    storeBehindReplyLosingProxy(
      portOf(PG_URL, 5432),
      (port) => new PostgresLeaseStore({ connection: withPort(PG_URL, port), table }),
    ),
  createBlackHoledStore: () =>
    storeBehindBlackHoleProxy(
      portOf(PG_URL, 5432),
      (port) => new PostgresLeaseStore({ connection: withPort(PG_URL, port), table }),
    ),
});

describe('LeaseStore conformance: PostgresLeaseStore', () => {
  for (const c of conformanceCases)
    (c.skip ? test.skip : c.concurrent ? test.concurrent : test)(c.name, c.run, c.timeoutMs);
});

describePushHandoverConformance('PostgresLeaseStore', () => ({
  leaseDurationMs: LEASE_MS,
  createStore: () => new PostgresLeaseStore({ connection: PG_URL, table: pushTable }),
}));

const handoverUpgrade: SqlHandoverUpgradeTarget = {
  previousVersionTable: async () => {
    const name = freshTable('le_pg_ho');
    // Exactly as the version before handover created it (with the state column).
    await withClient((client) =>
      client.query(`CREATE TABLE "public"."${name}" (election text PRIMARY KEY, holder text NOT NULL,
        lease_id uuid NOT NULL, term bigint NOT NULL, expires_at timestamptz NOT NULL, state jsonb NOT NULL DEFAULT '{}'::jsonb)`),
    );
    return name;
  },
  store: (name, options) => new PostgresLeaseStore({ connection: PG_URL, table: name, ...options }),
  previousVersion: (name) => {
    // Its acquire and read as it sent them; its renew and release are today's.
    const sql = postgresStatements(`"public"."${name}"`);
    const run = (text: string, values: unknown[]) =>
      withClient(async (client) => (await client.query(text, values)).rows);
    return {
      acquire: async (election, identity, ms = 30_000) => {
        const leaseId = randomUUID();
        const [row] = await run(sql.legacy.acquire, [election, identity, leaseId, ms]);
        return row?.acquired ? { election, holder: identity, leaseId, term: Number(row.term) } : undefined;
      },
      renew: async (lease) => (await run(sql.renew, [lease.election, lease.leaseId, lease.term, 30_000])).length === 1,
      release: (lease) => run(sql.release, [lease.election, lease.leaseId, lease.term, name]),
      read: async (election) => (await run(sql.legacy.read, [election]))[0],
    };
  },
  handoverColumns: (name) =>
    withClient(async (client) =>
      (
        await client.query(
          "SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND column_name IN ('meta', 'meta_lease_id', 'reserved_for', 'reserved_until', 'handover') ORDER BY column_name",
          [name],
        )
      ).rows.map((row) => row.column_name),
    ),
  migrate: (name) => withClient((client) => client.query(postgresHandoverMigrationSql(name))),
  migrationName: 'postgresHandoverMigrationSql()',
};

describeSqlHandoverUpgrade('PostgresLeaseStore', handoverUpgrade);

describeSqlRecords('PostgresLeaseStore', {
  store: handoverUpgrade.store,
  freshTable: () => freshTable('le_pg_rec'),
  previousVersionTable: async () => {
    const name = freshTable('le_pg_rec_old');
    // Exactly as the version before shared records created it (postgresLeaseTableSql() without records).
    await withClient((client) =>
      client.query(`CREATE TABLE "public"."${name}" (election text PRIMARY KEY, holder text NOT NULL,
        lease_id uuid NOT NULL, term bigint NOT NULL, expires_at timestamptz NOT NULL, state jsonb NOT NULL DEFAULT '{}'::jsonb,
        meta jsonb, meta_lease_id uuid, reserved_for text, reserved_until timestamptz, handover jsonb)`),
    );
    return name;
  },
  previousVersion: handoverUpgrade.previousVersion,
  hasRecordsColumn: (name) =>
    withClient(
      async (client) =>
        (
          await client.query(
            "SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = 'records'",
            [name],
          )
        ).rows.length === 1,
    ),
  migrate: (name) => withClient((client) => client.query(postgresRecordsMigrationSql(name))),
  migrationName: 'postgresRecordsMigrationSql()',
  lockingRow: (name, election, during) =>
    withClient(async (client) => {
      await client.query('BEGIN');
      try {
        await client.query(`SELECT 1 FROM "public"."${name}" WHERE election = $1 FOR UPDATE`, [election]);
        await during();
      } finally {
        await client.query('COMMIT');
      }
    }),
});

describeBlackHoleStopConformance('PostgresLeaseStore', () => ({
  leaseDurationMs: 3_000,
  createBlackHoledStore: () =>
    storeBehindBlackHoleProxy(
      portOf(PG_URL, 5432),
      (port) => new PostgresLeaseStore({ connection: withPort(PG_URL, port), table }),
    ),
}));

describe('PostgresLeaseStore specifics', () => {
  const stores: LeaseStore[] = [];
  const store = (options: ConstructorParameters<typeof PostgresLeaseStore>[0]) => {
    const created = new PostgresLeaseStore(options);
    stores.push(created);
    return created;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close?.()));
  });

  it('creates its table on first use, with the documented layout', async () => {
    const name = freshTable();
    const exists = () =>
      withClient(async (client) => (await client.query('SELECT to_regclass($1) AS t', [name])).rows[0].t !== null);
    expect(await exists()).toBe(false);
    const s = store({ connection: PG_URL, table: name });
    expect(await s.read('e', { signal: signal() })).toEqual({ held: false, term: 0 });
    expect(await exists()).toBe(true);
    const columns = await withClient(
      async (client) =>
        (
          await client.query(
            'SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position',
            [name],
          )
        ).rows,
    );
    expect(columns.map((row) => row.column_name)).toEqual([
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

  it('uses a table created beforehand from postgresLeaseTableSql() with createTable: false', async () => {
    const name = freshTable();
    const missing = store({ connection: PG_URL, table: name, createTable: false });
    await expect(missing.read('e', { signal: signal() })).rejects.toMatchObject({ kind: 'fatal' });
    await withClient((client) => client.query(postgresLeaseTableSql(name)));
    const result = await missing.acquire({ election: 'e', identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
    expect(result.acquired).toBe(true);
  });

  /** The table exactly as the version before leader state created it. */
  const previousVersionTableSql = (name: string) => `CREATE TABLE "public"."${name}" (
    election text PRIMARY KEY, holder text NOT NULL, lease_id uuid NOT NULL, term bigint NOT NULL, expires_at timestamptz NOT NULL)`;
  const stateColumn = (name: string) =>
    withClient(
      async (client) =>
        (
          await client.query(
            "SELECT data_type, is_nullable, column_default FROM information_schema.columns WHERE table_name = $1 AND column_name = 'state'",
            [name],
          )
        ).rows,
    );

  it('upgrade: a table of the previous version gains the state column in place, once, with two instances migrating at once', async () => {
    const name = freshTable('le_pg_old');
    await withClient((client) => client.query(previousVersionTableSql(name)));
    const [a, b] = [store({ connection: PG_URL, table: name }), store({ connection: PG_URL, table: name })];
    // Leases work on the old table as before; the lease row survives the migration.
    const taken = await a.acquire({ election: 'e', identity: 'a', leaseDurationMs: 30_000, signal: signal() });
    if (!taken.acquired) throw new Error('not acquired');
    expect(await stateColumn(name)).toEqual([]);
    // Both instances find the column missing at the same moment and add it: neither fails.
    const [written, read] = await Promise.all([
      a.writeState(taken.lease, { cursor: 7 }, { signal: signal() }),
      b.readState('e', { signal: signal() }),
    ]);
    expect(written).toBeUndefined();
    expect(read === undefined || read.term === taken.lease.term).toBe(true);
    expect(await stateColumn(name)).toEqual([{ data_type: 'jsonb', is_nullable: 'NO', column_default: "'{}'::jsonb" }]);
    expect(await b.readState('e', { signal: signal() })).toEqual({ value: { cursor: 7 }, term: taken.lease.term });
    expect(await b.read('e', { signal: signal() })).toEqual({ held: true, holder: 'a', term: taken.lease.term });
    // Idempotent: the documented SQL, run again by hand or by another instance, changes nothing.
    await withClient((client) => client.query(postgresLeaseStateMigrationSql(name)));
    expect(await b.readState('e', { signal: signal() })).toEqual({ value: { cursor: 7 }, term: taken.lease.term });
    // A replica of the previous version inserts rows without naming the column: they get the default.
    await withClient((client) =>
      client.query(
        `INSERT INTO "${name}" (election, holder, lease_id, term, expires_at) VALUES ('old', 'old', gen_random_uuid(), 1, now())`,
      ),
    );
    expect(await b.readState('old', { signal: signal() })).toBeUndefined();
  });

  it('upgrade with createTable: false: state calls name the migration to run, then work', async () => {
    const name = freshTable('le_pg_old');
    await withClient((client) => client.query(previousVersionTableSql(name)));
    const s = store({ connection: PG_URL, table: name, createTable: false });
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
      expect((error as Error).message).toContain('postgresLeaseStateMigrationSql()');
    }
    expect(await stateColumn(name)).toEqual([]);
    await withClient((client) => client.query(postgresLeaseStateMigrationSql(name)));
    await withClient((client) => client.query(postgresLeaseStateMigrationSql(name)));
    await s.writeState(taken.lease, 1, { signal: signal() });
    expect(await s.readState('e', { signal: signal() })).toEqual({ value: 1, term: taken.lease.term });
  });

  it('refuses U+0000, which jsonb cannot hold, before sending anything', async () => {
    const s = store({ connection: PG_URL, table });
    const election = `nul-${randomBytes(4).toString('hex')}`;
    const taken = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!taken.acquired) throw new Error('not acquired');
    await expect(s.writeState(taken.lease, 'a\u0000b', { signal: signal() })).rejects.toBeInstanceOf(TypeError);
    // A backslash followed by the text "u0000" is not the character, and is stored.
    await s.writeState(taken.lease, '\\u0000', { signal: signal() });
    expect(await s.readState(election, { signal: signal() })).toEqual({ value: '\\u0000', term: taken.lease.term });
    // The same for lease meta and handover requests (jsonb columns too).
    const nul = { advertise: 'a\u0000b' };
    await expect(
      s.renew(taken.lease, { leaseDurationMs: LEASE_MS, signal: signal(), meta: nul }),
    ).rejects.toBeInstanceOf(TypeError);
    // A folded renewal refuses either as a whole: nothing renewed, nothing written.
    for (const extra of [
      { meta: nul },
      {
        writeState: [
          { key: 'ok', value: 1 },
          { key: 'state', value: 'a\u0000b' },
        ],
      },
    ]) {
      await expect(
        s.renewWith(taken.lease, { leaseDurationMs: LEASE_MS, signal: signal(), ...extra }),
      ).rejects.toBeInstanceOf(TypeError);
    }
    expect(await s.readState(election, { signal: signal(), key: 'ok' })).toBeUndefined();
    await expect(
      s.acquire({ election, identity: 'b', leaseDurationMs: LEASE_MS, signal: signal(), meta: nul }),
    ).rejects.toBeInstanceOf(TypeError);
    const request = { election, id: 'r', term: 1, requestedBy: 'a\u0000', reason: 'operator', requestedAt: 1 };
    await expect(s.requestHandover(request, { signal: signal() })).rejects.toBeInstanceOf(TypeError);
    expect(await s.readHandover(election, { signal: signal() })).toBeUndefined();
  });

  it('refuses a shared record with U+0000, which jsonb cannot hold, before sending anything', async () => {
    const s = store({ connection: PG_URL, table });
    const election = `nul-rec-${randomBytes(4).toString('hex')}`;
    const nul = 'a\u0000b';
    // Not even a row appears: the TypeError comes before the statement.
    await expect(s.writeRecord(election, 'jobs', { nul }, { ifVersion: null, signal: signal() })).rejects.toThrow(
      TypeError,
    );
    expect(await s.read(election, { signal: signal() })).toEqual({ held: false, term: 0 });
    expect(
      await withClient(
        async (client) => (await client.query(`SELECT 1 FROM "${table}" WHERE election = $1`, [election])).rows,
      ),
    ).toEqual([]);
    expect(await s.writeRecord(election, 'jobs', '\\u0000', { ifVersion: null, signal: signal() })).toBe(true);
    const stored = await s.readRecord(election, 'jobs', { signal: signal() });
    expect(stored?.value).toBe('\\u0000');
    await expect(
      s.writeRecord(election, 'jobs', [nul], { ifVersion: stored?.version ?? null, signal: signal() }),
    ).rejects.toThrow(TypeError);
    expect(await s.readRecord(election, 'jobs', { signal: signal() })).toEqual(stored);
  });

  // Issue 24, defect 6: a value the server refuses (class 22, data exception) fails the same way every
  // time, so it is a FatalLeaseStoreError (logged as an error, health down), never a silent retry.
  it('an identity PostgreSQL text cannot hold (U+0000: SQLSTATE 22021) is a FatalLeaseStoreError, not transient', async () => {
    const s = store({ connection: PG_URL, table });
    const election = `nul-id-${randomBytes(4).toString('hex')}`;
    const acquire = s.acquire({ election, identity: 'a\u0000b', leaseDurationMs: LEASE_MS, signal: signal() });
    await expect(acquire).rejects.toBeInstanceOf(FatalLeaseStoreError);
    await expect(acquire).rejects.toThrow(/SQLSTATE 22021/);
    // Nothing was taken: a valid identity acquires at once.
    expect((await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() })).acquired).toBe(
      true,
    );
  });

  it('never closes a Pool or Client the user passed in; close() is idempotent', async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      for (const user of [pool, client]) {
        const s = new PostgresLeaseStore({ client: user, table });
        const election = `user-client-${randomBytes(4).toString('hex')}`;
        const watch = s.watch(election, () => undefined);
        const result = await s.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() });
        if (!result.acquired) throw new Error('not acquired');
        await s.release(result.lease, { signal: signal() });
        await watch.close();
        await s.close();
        await s.close();
        expect((await user.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
        // A closed store refuses further calls instead of reopening anything.
        await expect(s.read(election, { signal: signal() })).rejects.toBeInstanceOf(TransientLeaseStoreError);
      }
    } finally {
      await pool.end();
      await client.end();
    }
  });

  it('an unknown role is a FatalLeaseStoreError whose message and cause hold no password', async () => {
    const url = PG_URL.replace('postgres://postgres@', 'postgres://no_such_role_x:s3cret-pw@');
    const s = store({ connection: url, table });
    const error = await s.read('e', { signal: signal() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'fatal', name: 'FatalLeaseStoreError' });
    expect((error as Error).message).toMatch(/refused the login \(28000|28P01\)/);
    expect(inspect(error, { depth: 10 })).not.toContain('s3cret-pw');
    expect((error as Error).message).not.toContain('127.0.0.1');
  });

  it('a missing database is a FatalLeaseStoreError', async () => {
    const url = PG_URL.replace(/\/[^/]*$/, '/no_such_database_x');
    const error = await store({ connection: url, table })
      .read('e', { signal: signal() })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'fatal' });
    expect((error as Error).message).toContain('3D000');
  });

  it('a role without privileges gets a FatalLeaseStoreError naming the grants it needs', async () => {
    const role = uniqueName('le_limited');
    await withClient((client) => client.query(`CREATE ROLE "${role}" LOGIN`));
    try {
      const s = store({ connection: PG_URL.replace('postgres://postgres@', `postgres://${role}@`), table });
      const error = await s.read('e', { signal: signal() }).catch((e: unknown) => e);
      expect(error).toMatchObject({ kind: 'fatal' });
      expect((error as Error).message).toMatch(/42501.*GRANT SELECT, INSERT, UPDATE/);
      await s.close();
    } finally {
      await withClient((client) => client.query(`DROP ROLE IF EXISTS "${role}"`));
    }
  });

  it('an unreachable or silent server is a TransientLeaseStoreError within the signal', () =>
    expectUnreachableIsTransient((port) => store({ connection: `postgres://postgres@127.0.0.1:${port}/test`, table })));

  it('an acquire that lands after its caller gave up is released, not left behind', async () => {
    const election = `late-${randomBytes(4).toString('hex')}`;
    const [late, other] = [store({ connection: PG_URL, table }), store({ connection: PG_URL, table })];
    // Create the row, then lock it so the next acquire waits inside the server.
    const first = await other.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
    if (!first.acquired) throw new Error('not acquired');
    await other.release(first.lease, { signal: signal() });
    await withClient(async (blocker) => {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT * FROM "${table}" WHERE election = $1 FOR UPDATE`, [election]);
      const startedAt = performance.now();
      // A long lease: if it were left behind, nobody could take it for a minute.
      const aborted = late.acquire({ election, identity: 'late', leaseDurationMs: 60_000, signal: signal(300) });
      await expect(aborted).rejects.toBeInstanceOf(TransientLeaseStoreError);
      expect(performance.now() - startedAt).toBeLessThan(2_000);
      await blocker.query('COMMIT');
    });
    // The statement now commits; its clean-up must hand the lease back promptly.
    const deadline = performance.now() + 5_000;
    let result = await other.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
    while (!result.acquired && performance.now() < deadline) {
      expect(result).toMatchObject({ holder: 'late' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      result = await other.acquire({ election, identity: 'other', leaseDurationMs: LEASE_MS, signal: signal() });
    }
    expect(result.acquired).toBe(true);
  });

  it('after a simultaneous start the loser reports who holds the lease (30 warm races)', async () => {
    const [a, b] = [store({ connection: PG_URL, table }), store({ connection: PG_URL, table })];
    // Warm: pools connected, table there, so both statements really run at the same moment.
    await Promise.all([a.read('warm', { signal: signal() }), b.read('warm', { signal: signal() })]);
    const unnamed: string[] = [];
    for (let round = 0; round < 30; round++) {
      const election = `race-${round}-${randomBytes(4).toString('hex')}`;
      const results = await Promise.all([
        a.acquire({ election, identity: 'a', leaseDurationMs: LEASE_MS, signal: signal() }),
        b.acquire({ election, identity: 'b', leaseDurationMs: LEASE_MS, signal: signal() }),
      ]);
      const winners = results.filter((result) => result.acquired);
      expect(winners).toHaveLength(1);
      const winner = winners[0] as { lease: { holder: string; term: number } };
      const loser = results.find((result) => !result.acquired);
      if (loser?.acquired !== false || loser.holder !== winner.lease.holder || loser.term !== winner.lease.term) {
        unnamed.push(`${election}: ${JSON.stringify(loser)}`);
      }
    }
    expect(unnamed).toEqual([]);
  });

  it('refuses a malformed connection string at construction, naming the option, never echoing it', () => {
    for (const bad of [
      'postgres://app:s3cret-pw@db:port/test',
      'not a url s3cret-pw',
      'mysql://app:s3cret-pw@db/test',
    ]) {
      expectMalformedConnectionRefused(() => new PostgresLeaseStore({ connection: bad }), 'connection', 's3cret-pw');
      expectMalformedConnectionRefused(
        () => new PostgresLeaseStore({ connection: { connectionString: bad } }),
        'connection.connectionString',
        's3cret-pw',
      );
    }
    // Well-formed ones still construct (nothing connects before first use).
    for (const good of [
      PG_URL,
      'postgresql://app:pw@db:5432/test?sslmode=require',
      'postgres:///test',
      'socket:/var/run/postgresql?db=test',
    ]) {
      expect(() => new PostgresLeaseStore({ connection: good })).not.toThrow();
    }
  });

  it('rejects table, schema and channel names that are not plain identifiers', () => {
    for (const bad of ['', 'x"; DROP TABLE y; --', '1abc', 'a'.repeat(64), 'with space']) {
      expect(() => new PostgresLeaseStore({ connection: PG_URL, table: bad })).toThrow(TypeError);
      expect(() => new PostgresLeaseStore({ connection: PG_URL, schema: bad })).toThrow(TypeError);
      expect(() => new PostgresLeaseStore({ connection: PG_URL, channel: bad })).toThrow(TypeError);
    }
    expect(() => new PostgresLeaseStore({} as never)).toThrow(TypeError);
  });
});
