// The `leaderlease` command as an operator runs it: a separate Node process (the
// TypeScript source through the swc loader, as the other e2e children) against the machine's
// PostgreSQL. The test plays the replicas: it holds the lease, and acts on the handover request
// the CLI records the way an elector does (release reserved for the target, which then acquires).
import type { ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { StatusDocument } from '../../lib/cli/status.command.js';
import type { HandoverRequest, Lease, LeaseStore } from '../../lib/stores/lease-store.js';
import { PostgresLeaseStore } from '../../lib/stores/postgres/postgres.store.js';
import { exitOf, hardKill, spawnNode } from '../../scripts/lib/child-process.mjs';
import { dropPostgresTables, freePort, PG_URL, uniqueName } from '../setup/servers.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'lib/cli/bin.ts');
const REGISTER = join(ROOT, 'test/support/swc-register.mjs');
const LEASE_MS = 30_000;

const table = uniqueName('le_cli');
const election = 'billing';
// Typed by the contract: the handover capability is what the CLI needs of the store.
const store: LeaseStore = new PostgresLeaseStore({ connection: PG_URL, table });
const signal = () => AbortSignal.timeout(10_000);
const children = new Set<ChildProcess>();

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Started {
  child: ChildProcess;
  /** The exit code, once the process exited and its output was read to the end. */
  closed: Promise<number | null>;
  /** stdout, line by line, as it comes. */
  lines: string[];
  stderr: string[];
}

function start(args: string[], env: Record<string, string> = {}): Started {
  const child = spawnNode(['--import', REGISTER, BIN, ...args, '--table', table], {
    cwd: ROOT,
    env: { LEADER_ELECTION_STORE: 'postgres', LEADER_ELECTION_CONNECTION: PG_URL, ...env },
  });
  child.stdin?.end();
  children.add(child);
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const started: Started = { child, closed, lines: [], stderr: [] };
  if (child.stdout) createInterface({ input: child.stdout }).on('line', (line) => started.lines.push(line));
  if (child.stderr) createInterface({ input: child.stderr }).on('line', (line) => started.stderr.push(line));
  return started;
}

async function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  const { child, closed, lines, stderr } = start(args, env);
  const code = await closed;
  children.delete(child);
  return { code, stdout: lines.join('\n'), stderr: stderr.join('\n') };
}

async function acquire(identity: string, meta?: object): Promise<Lease> {
  const result = await store.acquire({ election, identity, leaseDurationMs: LEASE_MS, meta, signal: signal() });
  if (!result.acquired) throw new Error(`${identity} could not take ${election}: ${JSON.stringify(result)}`);
  return result.lease;
}

/** What an elector does with a request addressed to it: release reserved for the target, which then acquires. */
async function actOnRequest(lease: Lease, deadlineMs: number): Promise<HandoverRequest> {
  if (typeof store.readHandover !== 'function') throw new Error(`${store.name} has no handover capability`);
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    const request = await store.readHandover(election, { signal: signal() });
    if (request && request.term === lease.term) {
      await store.release(lease, { signal: signal(), handoverTo: request.to, reserveMs: 10_000 });
      await acquire(request.to ?? 'replica-any', { advertise: 'http://10.0.0.2:3000', leaderships: 1 });
      return request;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('no handover request appeared');
}

let first: Lease;

beforeAll(async () => {
  first = await acquire('replica-a', { advertise: 'http://10.0.0.1:3000', leaderships: 1 });
});

afterAll(async () => {
  for (const child of children) hardKill(child);
  await store.close?.();
  await dropPostgresTables(table);
});

// Needs the PostgreSQL store's handover capability (requestHandover/readHandover/listElections).
describe('CLI against PostgreSQL', () => {
  it('status --json lists the election with its holder, term and meta', async () => {
    const result = await cli(['status', '--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const document = JSON.parse(result.stdout) as StatusDocument;
    expect(document).toMatchObject({ store: 'PostgresLeaseStore', handoverSupported: true });
    expect(document.elections).toEqual([
      expect.objectContaining({
        election,
        held: true,
        holder: 'replica-a',
        term: first.term,
        advertise: 'http://10.0.0.1:3000',
        leaderships: 1,
        handover: null,
      }),
    ]);
  });

  it('handover --to --wait records the request, and returns once the target leads', async () => {
    const running = cli(['handover', '--election', election, '--to', 'replica-b', '--wait', '--timeout', '30000']);
    const request = await actOnRequest(first, 30_000);
    expect(request).toMatchObject({ election, term: first.term, to: 'replica-b', reason: 'operator' });
    expect(request.requestedBy).toMatch(/^cli:.+@.+$/);
    const result = await running;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`handover of "${election}" requested: replica-a (term ${first.term}) → replica-b`);
    expect(result.stdout).toMatch(new RegExp(`"${election}" is now led by replica-b \\(term \\d+\\), after \\d+ ms`));
  });

  it('status shows the answered request as stale once the term moved on', async () => {
    const result = await cli(['status', '--election', election, '--json']);
    const [row] = (JSON.parse(result.stdout) as StatusDocument).elections;
    expect(row).toMatchObject({ holder: 'replica-b', handover: { to: 'replica-b', term: first.term, stale: true } });
    const table = await cli(['status', '--election', election]);
    expect(table.stdout).toMatch(/STALE \(for term \d+\) to replica-b, by cli:/);
  });

  it('handover exits 4 when nobody leads', async () => {
    const result = await cli(['handover', '--election', 'nobody-here']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('nobody leads "nobody-here" right now');
  });
});

describe('CLI process', () => {
  it('status --watch prints a JSON line per refresh and exits 0 on Ctrl-C', async () => {
    const { child, lines } = start(['status', '--watch', '--json', '--interval', '200', '--election', election]);
    const until = Date.now() + 20_000;
    while (lines.length < 2 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    child.kill('SIGINT');
    expect(await exitOf(child)).toMatchObject({ code: 0 });
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ elections: [{ election }] });
  });

  it('an unreachable store exits 3 and prints no part of the connection string', async () => {
    const marker = 'Mark3rPassw0rd';
    const connection = `postgres://operator:${marker}@127.0.0.1:${await freePort()}/test`;
    for (const env of [{ LEADER_ELECTION_CONNECTION: connection }, {} as Record<string, string>]) {
      const args = ['status', '--election', election, '--timeout-ms', '3000'];
      const result = await cli(env.LEADER_ELECTION_CONNECTION ? args : [...args, '--connection', connection], env);
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/^PostgresLeaseStore is unreachable or failing: /);
      expect(`${result.stdout}${result.stderr}`).not.toContain(marker);
    }
  });
});
