// A stopped elector leaves nothing behind that keeps the process alive: PostgreSQL built from
// `connection` (its pool lets idle connections go, its LISTEN connection ends with the last
// watch), Redis built from `connection` (its connection holds the process only while a call is in
// flight) and Redis built from the user's client (our subscriber connection ends with the last
// watch). MySQL (mysql2's pool runs a 1 s timer for as long as it lives) and etcd (gRPC channel)
// hold the process until `store.close()`: docs/guides/stores.md says so, and the Nest module closes the store
// on shutdown.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { PG_URL, REDIS_URL, uniqueName } from '../setup/servers.js';

const ROOT = process.cwd();
const REGISTER = join(ROOT, 'test/support/swc-register.mjs');
const CHILD = join(ROOT, 'test/conformance/exit-after-stop.child.ts');
/** After 'stopped', the process must be gone within this (pg's idle check, socket teardown). */
const EXIT_WITHIN_MS = 5_000;

const pgTable = uniqueName('le_exit');
const redisPrefix = `${uniqueName('le_exit')}:`;

afterAll(async () => {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP TABLE IF EXISTS "${pgTable}"`);
  await client.end();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${redisPrefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

function runChild(
  kind: string,
  url: string,
  namespace: string,
): Promise<{ code: number | null; exitAfterStopMs: number; output: string }> {
  return new Promise((resolve, reject) => {
    const election = `exit-${randomBytes(4).toString('hex')}`;
    const child = spawn(process.execPath, ['--import', REGISTER, CHILD, kind, url, namespace, election], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stoppedAt: number | undefined;
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (stoppedAt === undefined && output.includes('stopped\n')) stoppedAt = performance.now();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, exitAfterStopMs: stoppedAt === undefined ? Number.NaN : performance.now() - stoppedAt, output });
    });
  });
}

describe('a stopped elector lets the process exit by itself', () => {
  it('PostgresLeaseStore built from `connection`, never closed', async () => {
    const { code, exitAfterStopMs, output } = await runChild('postgres', PG_URL, pgTable);
    expect({ code, output }).toEqual({ code: 0, output: 'elected\nstopped\n' });
    expect(exitAfterStopMs).toBeLessThan(EXIT_WITHIN_MS);
  }, 40_000);

  it('RedisLeaseStore built from `connection`, never closed', async () => {
    const { code, exitAfterStopMs, output } = await runChild('redis-connection', REDIS_URL, redisPrefix);
    expect({ code, output }).toEqual({ code: 0, output: 'elected\nstopped\n' });
    expect(exitAfterStopMs).toBeLessThan(EXIT_WITHIN_MS);
  }, 40_000);

  it("RedisLeaseStore built from the user's client, which the user closes", async () => {
    const { code, exitAfterStopMs, output } = await runChild('redis', REDIS_URL, redisPrefix);
    expect({ code, output }).toEqual({ code: 0, output: 'elected\nstopped\n' });
    expect(exitAfterStopMs).toBeLessThan(EXIT_WITHIN_MS);
  }, 40_000);
});
