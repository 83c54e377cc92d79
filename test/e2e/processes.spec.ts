// Separate Node processes (the fixture app under test/fixtures) competing through Azurite:
// the real failure modes — SIGTERM with enableShutdownHooks, kill -9, a clean exit.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { TestService } from '../setup/service.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURE = join(ROOT, 'test/fixtures/leader-app.ts');
const REGISTER = join(ROOT, 'test/support/swc-register.mjs');

const LEASE_MS = 15_000; // Azure's minimum
const RETRY_MS = 1_000;
const SLACK_MS = 4_000; // process start-up and a loaded 2-core machine

interface AppEvent {
  type: 'ready' | 'tick' | 'elected' | 'revoked' | 'closed';
  id: string;
  at: number;
  term?: number;
  reason?: string;
}

class Replica {
  readonly events: AppEvent[] = [];
  spawnedAt = 0;
  readonly stderr: string[] = [];
  exit?: { code: number | null; signal: NodeJS.Signals | null; at: number };
  readonly exited: Promise<void>;

  constructor(
    readonly id: string,
    readonly child: ChildProcessWithoutNullStreams,
  ) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        this.events.push(JSON.parse(line) as AppEvent);
      } catch {
        this.stderr.push(line);
      }
    });
    createInterface({ input: child.stderr }).on('line', (line) => this.stderr.push(line));
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exit = { code, signal, at: Date.now() };
        resolve();
      }),
    );
  }

  first(type: AppEvent['type']): AppEvent | undefined {
    return this.events.find((e) => e.type === type);
  }

  all(type: AppEvent['type']): AppEvent[] {
    return this.events.filter((e) => e.type === type);
  }
}

function spawnReplica(id: string, election: string, connectionString: string): Replica {
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, ['--enable-source-maps', '--import', REGISTER, FIXTURE], {
    cwd: ROOT,
    env: {
      ...process.env,
      AZURITE_CONNECTION_STRING: connectionString,
      IDENTITY: id,
      ELECTION: election,
      LEASE_MS: String(LEASE_MS),
      RETRY_MS: String(RETRY_MS),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const replica = new Replica(id, child);
  replica.spawnedAt = spawnedAt;
  return replica;
}

async function until<T>(
  what: string,
  probe: () => T | undefined | false,
  timeoutMs: number,
  replicas: Replica[],
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() - start > timeoutMs) {
      const logs = replicas.map((r) => `${r.id}: ${r.stderr.slice(-10).join('\n    ')}`).join('\n');
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${logs}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('separate processes over Azurite', () => {
  let connectionString: string;
  let ownAzurite: TestService | undefined;
  const replicas: Replica[] = [];

  beforeAll(async () => {
    connectionString = process.env.AZURITE_CONNECTION_STRING ?? '';
    if (!connectionString) {
      // Run alone (without the global setup): start our own emulator.
      const { startAzurite } = await import('../setup/azurite.js');
      const azurite = await startAzurite();
      ownAzurite = azurite;
      connectionString = azurite.connectionString;
    }
  });

  afterAll(async () => {
    for (const replica of replicas) if (!replica.exit) replica.child.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
    await ownAzurite?.stop();
  });

  it('one process runs the job; SIGTERM hands over within a retry interval; kill -9 after the lease expires; a closed app exits on its own', async () => {
    const election = `processes-${process.pid}-${Date.now()}`;
    const group = ['p1', 'p2', 'p3'].map((id) => spawnReplica(id, election, connectionString));
    replicas.push(...group);
    await until('three replicas ready', () => group.every((r) => r.first('ready')), 60_000, group);

    // Exactly one leader, and only it runs the job.
    const leaders = group.filter((r) => r.first('elected'));
    expect(leaders).toHaveLength(1);
    const [leader] = leaders as [Replica];
    const windowStart = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const tickers = new Set(
      group.flatMap((r) =>
        r
          .all('tick')
          .filter((e) => e.at >= windowStart)
          .map((e) => e.id),
      ),
    );
    expect([...tickers]).toEqual([leader.id]);

    // SIGTERM: the leader drains, releases and exits by itself; a follower leads within a retry interval.
    const termAt = Date.now();
    leader.child.kill('SIGTERM');
    await until('the leader to exit after SIGTERM', () => leader.exit, 15_000, group);
    // Nest closed the app (the term ended as 'stopped'), then re-raised SIGTERM to end the process.
    expect(leader.exit!.signal).toBe('SIGTERM');
    expect(leader.first('revoked')).toMatchObject({ reason: 'stopped' });
    const rest = group.filter((r) => r !== leader);
    const second = await until(
      'a new leader',
      () => rest.find((r) => r.first('elected')),
      RETRY_MS * 1.2 + SLACK_MS,
      group,
    );
    const secondElected = second.first('elected')!;
    const lastOldTick = Math.max(...leader.all('tick').map((e) => e.at));
    const firstNewTick = await until('the new leader to tick', () => second.first('tick'), 5_000, group);
    expect(lastOldTick).toBeLessThan(firstNewTick.at);
    expect(secondElected.term).toBeGreaterThan(leader.first('elected')!.term!);
    const sigtermHandover = secondElected.at - leader.exit!.at;
    expect(sigtermHandover).toBeLessThanOrEqual(RETRY_MS * 1.2 + SLACK_MS);

    // kill -9: nobody releases; the last replica takes over once the lease has expired.
    const killAt = Date.now();
    second.child.kill('SIGKILL');
    const [third] = rest.filter((r) => r !== second) as [Replica];
    const thirdElected = await until(
      'takeover after kill -9',
      () => third.first('elected'),
      LEASE_MS + RETRY_MS * 1.2 + SLACK_MS,
      group,
    );
    const killTakeover = thirdElected.at - killAt;
    // Not before the lease the dead leader last renewed (≤ 1 s before the kill) could expire.
    expect(killTakeover).toBeGreaterThanOrEqual(LEASE_MS - 2_000);
    expect(third.all('tick').every((e) => e.at > killAt)).toBe(true);

    // app.close() with nothing else to do: every timer and socket is gone, the process ends by itself.
    const closeAt = Date.now();
    third.child.stdin.write('close\n');
    await until('the closed app to exit on its own', () => third.exit, 15_000, group);
    expect(third.exit).toMatchObject({ code: 0, signal: null });
    expect(third.first('closed')).toBeDefined();
    expect(third.first('revoked')).toMatchObject({ reason: 'stopped' });

    console.info(
      [
        `spawn → ready (slowest of 3): ${Math.max(...group.map((r) => r.first('ready')!.at - r.spawnedAt))} ms`,
        `SIGTERM → exit: ${leader.exit!.at - termAt} ms; exit → new leader: ${sigtermHandover} ms (retry interval ${RETRY_MS} ms)`,
        `kill -9 → new leader: ${killTakeover} ms (lease ${LEASE_MS} ms)`,
        `close → process exit: ${third.exit!.at - closeAt} ms`,
      ].join('\n'),
    );
  }, 180_000);
});
