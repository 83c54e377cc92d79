// The operator CLI in-process: commander parsing, every exit code, the --json shapes, stale
// requests, handover --wait against a simulated replica, and that no connection secret is ever
// printed (also against real drivers pointed at a closed loopback port).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExitCode } from '../../lib/cli/cli-errors.js';
import { type CliContext, runCli } from '../../lib/cli/main.js';
import type { StatusDocument } from '../../lib/cli/status.command.js';
import type { StoreConfig } from '../../lib/cli/store-factory.js';
import { standbySlotKey } from '../../lib/election/standby.js';
import { FatalLeaseStoreError, TransientLeaseStoreError } from '../../lib/shared/errors.js';
import type { HandoverRequest, Lease, LeaseInfo, LeaseStore } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { freePort } from '../setup/servers.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CONNECTION = 'postgres://operator:not-used-here@127.0.0.1:1/db';
const signal = () => AbortSignal.timeout(5_000);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  configs: StoreConfig[];
}

async function cli(
  argv: string[],
  store: LeaseStore | undefined,
  extra: Partial<CliContext> & { env?: Record<string, string | undefined> } = {},
): Promise<Run> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const configs: StoreConfig[] = [];
  const code = await runCli(argv, {
    output: { out: (text) => stdout.push(text), err: (text) => stderr.push(text) },
    requestedBy: 'cli:tester@test-host',
    ...extra,
    env: { LEADER_ELECTION_STORE: 'postgres', LEADER_ELECTION_CONNECTION: CONNECTION, ...extra.env },
    // `buildStore: undefined` asks for the real factory.
    buildStore:
      'buildStore' in extra
        ? extra.buildStore
        : async (config) => {
            configs.push(config);
            if (!store) throw new Error('no store in this test');
            return store;
          },
  });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n'), configs };
}

async function lead(store: InMemoryLeaseStore, election: string, identity: string, meta?: object): Promise<Lease> {
  const result = await store.acquire({ election, identity, leaseDurationMs: 60_000, meta, signal: signal() });
  if (!result.acquired) throw new Error(`${identity} could not take ${election}`);
  return result.lease;
}

/** A store with only the methods named: a store of an older version, or a third-party one. */
function without(store: LeaseStore, ...methods: Array<keyof LeaseStore>): LeaseStore {
  const copy: Record<string, unknown> = { name: store.name, limits: store.limits };
  for (const key of ['acquire', 'renew', 'release', 'read', 'requestHandover', 'readHandover', 'listElections']) {
    const method = (store as unknown as Record<string, unknown>)[key];
    if (typeof method === 'function' && !methods.includes(key as keyof LeaseStore)) copy[key] = method.bind(store);
  }
  return copy as unknown as LeaseStore;
}

function failingRead(store: LeaseStore, error: Error): LeaseStore {
  return Object.assign(Object.create(store) as LeaseStore, {
    read: async (): Promise<LeaseInfo> => {
      throw error;
    },
  });
}

describe('CLI status', () => {
  it('shows holder, term, meta and the pending request of every listed election as a table', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a', { advertise: 'http://10.0.0.4:3000', leaderships: 2 });
    const reports = await lead(store, 'reports', 'pod-b');
    await store.release(reports, { signal: signal(), handoverTo: 'pod-c', reserveMs: 60_000 });
    const run = await cli(['status'], store);
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
    const [header, billing, reportsRow] = run.stdout.split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['ELECTION', 'STATE', 'HOLDER', 'TERM', 'ADVERTISE', 'LEADS', 'HANDOVER']);
    expect(billing.split(/\s{2,}/)).toEqual(['billing', 'held', 'pod-a', '1', 'http://10.0.0.4:3000', '2', '-']);
    expect(reportsRow.split(/\s{2,}/)).toEqual(['reports', 'free, reserved for pod-c', '-', '1', '-', '-', '-']);
  });

  it('--json prints one document with every field, null where absent', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a', { advertise: 'http://a', leaderships: 1, pinned: true });
    const requestedAt = Date.now() - 5_000;
    await store.requestHandover(
      { election: 'billing', id: 'r1', term: 1, to: 'pod-b', requestedBy: 'ops', reason: 'deploy', requestedAt },
      { signal: signal() },
    );
    const run = await cli(['status', '--json', '--election', 'billing', '--election', 'idle'], store);
    expect(run.code).toBe(ExitCode.ok);
    const document = JSON.parse(run.stdout) as StatusDocument;
    expect(document).toEqual({
      store: 'InMemoryLeaseStore',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      handoverSupported: true,
      elections: [
        {
          election: 'billing',
          held: true,
          holder: 'pod-a',
          term: 1,
          advertise: 'http://a',
          leaderships: 1,
          priority: 0,
          meta: { advertise: 'http://a', leaderships: 1, pinned: true },
          reservedFor: null,
          handover: {
            id: 'r1',
            term: 1,
            to: 'pod-b',
            requestedBy: 'ops',
            reason: 'deploy',
            requestedAt,
            ageMs: expect.any(Number),
            stale: false,
          },
        },
        {
          election: 'idle',
          held: false,
          holder: null,
          term: 0,
          advertise: null,
          leaderships: null,
          priority: null,
          meta: null,
          reservedFor: null,
          handover: null,
        },
      ],
    });
    expect(document.elections[0].handover?.ageMs).toBeGreaterThanOrEqual(5_000);
    // Only when the store reports it.
    expect(document.elections[0]).not.toHaveProperty('expiresInMs');
  });

  it('prints expiresInMs (and an EXPIRES IN column) only when the store reports it', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a');
    const reporting = Object.assign(Object.create(store) as LeaseStore, {
      read: async (election: string, options: { signal: AbortSignal }) => ({
        ...(await store.read(election, options)),
        expiresInMs: 4_200,
      }),
    });
    const json = await cli(['status', '--json', '--election', 'billing'], reporting);
    expect((JSON.parse(json.stdout) as StatusDocument).elections[0].expiresInMs).toBe(4_200);
    const table = await cli(['status', '--election', 'billing'], reporting);
    expect(table.stdout.split('\n')[0]).toContain('EXPIRES IN');
    expect(table.stdout.split('\n')[1]).toContain('4.2 s');
  });

  it('marks a request made for an earlier term as stale', async () => {
    const store = new InMemoryLeaseStore();
    const first = await lead(store, 'billing', 'pod-a');
    await store.requestHandover(
      {
        election: 'billing',
        id: 'old',
        term: first.term,
        requestedBy: 'ops',
        reason: 'operator',
        requestedAt: Date.now(),
      },
      { signal: signal() },
    );
    await store.release(first, { signal: signal() });
    await lead(store, 'billing', 'pod-b');
    const json = await cli(['status', '--json', '--election', 'billing'], store);
    expect((JSON.parse(json.stdout) as StatusDocument).elections[0].handover).toMatchObject({ term: 1, stale: true });
    const table = await cli(['status', '--election', 'billing'], store);
    expect(table.stdout).toMatch(/STALE \(for term 1\) to any other replica, by ops \(operator\)/);
  });

  it('accepts comma-separated and repeated elections, in that order', async () => {
    const store = new InMemoryLeaseStore();
    const run = await cli(['status', '--json', '--election', 'c,a', '--election', 'b'], store);
    expect((JSON.parse(run.stdout) as StatusDocument).elections.map((e) => e.election)).toEqual(['c', 'a', 'b']);
  });

  it('lists elections only, not the candidate slots of standby followers', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a');
    await lead(store, standbySlotKey('billing', 0), 'pod-b');
    const run = await cli(['status', '--json'], store);
    expect((JSON.parse(run.stdout) as StatusDocument).elections.map((e) => e.election)).toEqual(['billing']);
  });

  it('says so when the namespace has no election', async () => {
    const run = await cli(['status'], new InMemoryLeaseStore());
    expect(run).toMatchObject({ code: ExitCode.ok, stdout: 'no election has a lease record in this namespace' });
  });

  it('shows the lease without requests on a store lacking readHandover', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a');
    const run = await cli(['status', '--json', '--election', 'billing'], without(store, 'readHandover'));
    expect(JSON.parse(run.stdout)).toMatchObject({ handoverSupported: false, elections: [{ holder: 'pod-a' }] });
    const table = await cli(['status', '--election', 'billing'], without(store, 'readHandover'));
    expect(table.stdout).toContain('n/a (store lacks readHandover)');
  });

  it('exits 6 when no election is named and the store cannot list them', async () => {
    const run = await cli(['status'], without(new InMemoryLeaseStore(), 'listElections'));
    expect(run.code).toBe(ExitCode.unsupported);
    expect(run.stderr).toMatch(/cannot list its elections \(pass --election\): it implements no listElections/);
  });

  it('--watch --json prints one line per refresh until interrupted, then exits 0', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a');
    const stop = new AbortController();
    const lines: string[] = [];
    const code = await runCli(['status', '--watch', '--json', '--interval', '100'], {
      output: {
        out: (text) => {
          lines.push(text);
          if (lines.length === 3) stop.abort();
        },
        err: (text) => lines.push(`stderr: ${text}`),
      },
      env: { LEADER_ELECTION_STORE: 'postgres', LEADER_ELECTION_CONNECTION: CONNECTION },
      buildStore: async () => store,
      interrupt: () => stop.signal,
    });
    expect(code).toBe(ExitCode.ok);
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ elections: [{ holder: 'pod-a' }] });
  });

  it('--watch reports a transient failure and keeps watching; a fatal one ends it with 3', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a');
    let reads = 0;
    const flaky = Object.assign(Object.create(store) as LeaseStore, {
      read: async (election: string, options: { signal: AbortSignal }) => {
        reads += 1;
        if (reads === 1) throw new TransientLeaseStoreError('connection reset');
        if (reads === 3) throw new FatalLeaseStoreError('permission denied');
        return store.read(election, options);
      },
    });
    const run = await cli(['status', '--watch', '--interval', '100', '--election', 'billing'], flaky, {
      interrupt: () => new AbortController().signal,
    });
    expect(run.code).toBe(ExitCode.store);
    expect(run.stderr).toBe(
      'refresh failed, retrying: connection reset\nInMemoryLeaseStore refused the request: permission denied',
    );
    expect(run.stdout).toMatch(/InMemoryLeaseStore at .* \(every 100 ms, Ctrl-C to stop\)\nELECTION/);
  });
});

describe('CLI handover', () => {
  it('records a request for the current term and exits 0 without --wait', async () => {
    const store = new InMemoryLeaseStore();
    const lease = await lead(store, 'billing', 'pod-a');
    const run = await cli(['handover', '--election', 'billing', '--to', 'pod-b', '--reason', 'drain node 3'], store);
    expect(run.code).toBe(ExitCode.ok);
    const request = await store.readHandover('billing', { signal: signal() });
    expect(request).toEqual({
      election: 'billing',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      term: lease.term,
      to: 'pod-b',
      requestedBy: 'cli:tester@test-host',
      reason: 'drain node 3',
      requestedAt: expect.any(Number),
    });
    expect(run.stdout).toBe(`handover of "billing" requested: pod-a (term 1) → pod-b (request ${request?.id})`);
  });

  it('defaults the reason to operator and the target to any other replica; names the OS user otherwise', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a');
    const run = await cli(['handover', '--election', 'billing', '--json'], store, { requestedBy: undefined });
    const request = (await store.readHandover('billing', { signal: signal() })) as HandoverRequest;
    expect(request).not.toHaveProperty('to');
    expect(request.reason).toBe('operator');
    expect(request.requestedBy).toMatch(/^cli:.+@.+$/);
    expect(JSON.parse(run.stdout)).toEqual({ election: 'billing', from: { holder: 'pod-a', term: 1 }, request });
  });

  it('exits 4 when nobody leads', async () => {
    const store = new InMemoryLeaseStore();
    const run = await cli(['handover', '--election', 'billing'], store);
    expect(run.code).toBe(ExitCode.noLeader);
    expect(run.stderr).toBe('nobody leads "billing" right now, so there is no leader to hand over from');
    expect(await store.readHandover('billing', { signal: signal() })).toBeUndefined();
  });

  it('records nothing when --to already leads', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a');
    const run = await cli(['handover', '--election', 'billing', '--to', 'pod-a'], store);
    expect(run).toMatchObject({
      code: ExitCode.ok,
      stdout: 'pod-a already leads "billing" (term 1): nothing to hand over',
    });
    expect(await store.readHandover('billing', { signal: signal() })).toBeUndefined();
  });

  it('exits 6 on a store without requestHandover', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a');
    const run = await cli(['handover', '--election', 'billing'], without(store, 'requestHandover'));
    expect(run.code).toBe(ExitCode.unsupported);
    expect(run.stderr).toMatch(/cannot record handover requests: it implements no requestHandover/);
  });

  it('--wait follows the lease to the named replica and prints it', async () => {
    const store = new InMemoryLeaseStore();
    const lease = await lead(store, 'billing', 'pod-a');
    // The leader's side, as an elector would do it: see the request, release reserved for its target.
    const replica = (async () => {
      for (;;) {
        const request = await store.readHandover('billing', { signal: signal() });
        if (request) {
          await store.release(lease, { signal: signal(), handoverTo: request.to, reserveMs: 5_000 });
          await lead(store, 'billing', request.to as string);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const run = await cli(['handover', '--election', 'billing', '--to', 'pod-b', '--wait', '--interval', '50'], store);
    await replica;
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stderr).toBe('waiting up to 60000 ms for a new leader of "billing"…');
    expect(run.stdout.split('\n')[1]).toMatch(/^"billing" is now led by pod-b \(term 2\), after \d+ ms$/);
  });

  it('--wait --json prints one document with the new leader', async () => {
    const store = new InMemoryLeaseStore();
    const lease = await lead(store, 'billing', 'pod-a');
    setTimeout(async () => {
      await store.release(lease, { signal: signal() });
      await lead(store, 'billing', 'pod-c');
    }, 200);
    const run = await cli(['handover', '--election', 'billing', '--wait', '--json', '--interval', '50'], store);
    expect(run.code).toBe(ExitCode.ok);
    expect(JSON.parse(run.stdout)).toMatchObject({
      election: 'billing',
      from: { holder: 'pod-a', term: 1 },
      request: { term: 1, reason: 'operator' },
      newLeader: { holder: 'pod-c', term: 2, waitedMs: expect.any(Number) },
    });
  });

  it('--wait with --to keeps waiting while another replica leads, and exits 5 at the timeout', async () => {
    const store = new InMemoryLeaseStore();
    const lease = await lead(store, 'billing', 'pod-a');
    await store.release(lease, { signal: signal() });
    const started = Date.now();
    const running = cli(
      ['handover', '--election', 'billing', '--to', 'pod-b', '--wait', '--timeout', '600', '--interval', '50'],
      Object.assign(Object.create(store) as LeaseStore, {
        // The first read (before the request) still sees pod-a; later polls see pod-c.
        read: (() => {
          let first = true;
          return async (election: string, options: { signal: AbortSignal }) => {
            if (first) {
              first = false;
              return { held: true, holder: 'pod-a', term: 1 };
            }
            return store.read(election, options);
          };
        })(),
      }),
    );
    await lead(store, 'billing', 'pod-c');
    const run = await running;
    expect(run.code).toBe(ExitCode.waitTimedOut);
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    expect(run.stderr.split('\n')[1]).toBe('no handover of "billing" within 600 ms: pod-c leads (term 2)');
  });

  it('--wait exits 5 when the leader never lets go', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a');
    const run = await cli(['handover', '--election', 'billing', '--wait', '--timeout', '300', '--json'], store);
    expect(run.code).toBe(ExitCode.waitTimedOut);
    expect(JSON.parse(run.stdout)).toMatchObject({ newLeader: null });
    expect(run.stderr).toMatch(/no handover of "billing" within 300 ms: pod-a leads \(term 1\)$/);
  });
});

describe('CLI options and exit codes', () => {
  it('prints help with the exit codes and exits 0', async () => {
    const run = await cli(['--help'], undefined);
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout).toContain('Exit codes:\n  0  ok\n  1  unexpected error\n  2  usage error');
    expect(run.stdout).toContain('6  the store lacks the capability');
    const status = await cli(['status', '--help'], undefined);
    expect(status.stdout).toMatch(/--election <names>[\s\S]*--store <kind>[\s\S]*Exit codes:/);
  });

  it.each([
    [['status'], { LEADER_ELECTION_STORE: undefined }, /--store is required \(or set LEADER_ELECTION_STORE\)/],
    [['status', '--store', 'mongo'], {}, /argument 'mongo' is invalid. Allowed choices are azure, postgres/],
    [['status'], { LEADER_ELECTION_STORE: 'mongo' }, /LEADER_ELECTION_STORE must be one of azure, postgres/],
    [
      ['status'],
      { LEADER_ELECTION_CONNECTION: undefined },
      /no connection to the store: set LEADER_ELECTION_CONNECTION or pass --connection/,
    ],
    [['status', '--store', 'redis', '--schema', 's'], {}, /--schema applies to --store postgres only, not redis/],
    [['status', '--store', 'postgres', '--prefix', 'p'], {}, /--prefix applies to --store azure or redis or etcd only/],
    [['status', '--interval', '10'], {}, /--interval must be a whole number of milliseconds from 100 to 3600000/],
    [['status', '--timeout-ms', 'soon'], {}, /--timeout-ms must be a whole number/],
    [['status', '--election', 'bad name!'], {}, /election names are 1-200 letters/],
    [['handover'], {}, /required option '--election <name>' not specified/],
    [['handover', '--election', 'a', '--reason', ' '], {}, /--reason must be non-empty text/],
    [['status', '--nope'], {}, /unknown option '--nope'/],
    [[], {}, /Usage: leaderlease/],
  ])('exits 2 on a usage error: %j %j', async (argv, env, message) => {
    const run = await cli(argv, new InMemoryLeaseStore(), { env });
    expect(run.code).toBe(ExitCode.usage);
    expect(run.stderr).toMatch(message);
    expect(run.configs).toEqual([]);
  });

  it('passes the store, connection and namespace options to the factory; --connection overrides the env', async () => {
    const run = await cli(
      ['status', '--store', 'postgres', '--connection', 'postgres://x@127.0.0.1/db', '--table', 't', '--schema', 's'],
      new InMemoryLeaseStore(),
      { env: { LEADER_ELECTION_STORE: 'redis' } },
    );
    expect(run.configs).toEqual([
      {
        kind: 'postgres',
        connection: 'postgres://x@127.0.0.1/db',
        table: 't',
        schema: 's',
        container: undefined,
        prefix: undefined,
      },
    ]);
  });

  it('exits 3 when the store fails (transient or fatal), naming the store and its redacted message', async () => {
    const store = new InMemoryLeaseStore();
    const transient = await cli(
      ['status', '--election', 'a'],
      failingRead(store, new TransientLeaseStoreError('ECONNREFUSED 127.0.0.1:5432')),
    );
    expect(transient).toMatchObject({
      code: ExitCode.store,
      stderr: 'InMemoryLeaseStore is unreachable or failing: ECONNREFUSED 127.0.0.1:5432',
    });
    const fatal = await cli(['handover', '--election', 'a'], failingRead(store, new FatalLeaseStoreError('denied')));
    expect(fatal).toMatchObject({ code: ExitCode.store, stderr: 'InMemoryLeaseStore refused the request: denied' });
  });

  it('exits 1 on anything else, with its message only', async () => {
    const run = await cli(['status', '--election', 'a'], failingRead(new InMemoryLeaseStore(), new Error('boom')));
    expect(run).toMatchObject({ code: ExitCode.unexpected, stderr: 'unexpected error: boom' });
  });

  it('closes the store on every path', async () => {
    const closed: string[] = [];
    const closing = (store: LeaseStore, name: string) =>
      Object.assign(Object.create(store) as LeaseStore, { close: async () => void closed.push(name) });
    const base = new InMemoryLeaseStore();
    await cli(['status'], closing(base, 'ok'));
    await cli(['handover', '--election', 'x'], closing(base, 'no leader'));
    await cli(['status', '--election', 'x'], closing(failingRead(base, new Error('boom')), 'error'));
    expect(closed).toEqual(['ok', 'no leader', 'error']);
  });
});

describe('CLI secrets', () => {
  const MARKER = 'Mark3rPassw0rd';

  it('never prints a secret a store error happens to contain (env or --connection)', async () => {
    const connection = `postgres://ops:${MARKER}@127.0.0.1:5432/db`;
    const leaky = failingRead(
      new InMemoryLeaseStore(),
      new TransientLeaseStoreError(`cannot reach ${connection} (password ${MARKER})`),
    );
    for (const context of [
      { argv: ['status', '--election', 'a'], env: { LEADER_ELECTION_CONNECTION: connection } },
      { argv: ['status', '--election', 'a', '--connection', connection], env: {} },
      { argv: ['status', '--election', 'a', `--connection=${connection}`], env: {} },
    ]) {
      const run = await cli(context.argv, leaky, { env: context.env });
      expect(run.code).toBe(ExitCode.store);
      expect(`${run.stdout}${run.stderr}`).not.toContain(MARKER);
      expect(run.stderr).toContain('cannot reach ***');
    }
  });

  it('redacts Azure account keys and SAS signatures', async () => {
    const key = 'S2V5TWFya2VyU2VjcmV0MTIzNDU2Nzg5MA==';
    const sig = 'SigMarker1234567890abcdef%3D';
    for (const connection of [
      `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${key};BlobEndpoint=http://127.0.0.1:1/x`,
      `BlobEndpoint=http://127.0.0.1:1/x;SharedAccessSignature=sv=2024-01-01&sp=r&sig=${sig}`,
      `https://account.blob.core.windows.net/leases?sv=2024&sp=r&sig=${sig}`,
    ]) {
      const secret = connection.includes(key) ? key : sig;
      const leaky = failingRead(new InMemoryLeaseStore(), new Error(`the SDK said: ${secret}`));
      const run = await cli(['status', '--store', 'azure', '--election', 'a'], leaky, {
        env: { LEADER_ELECTION_CONNECTION: connection },
      });
      expect(run.stderr).toBe('unexpected error: the SDK said: ***');
    }
  });

  // The real drivers, pointed at a loopback port nobody listens on: the CLI's own messages and the
  // stores' errors must not contain the password.
  it.each([
    ['postgres', (port: number) => `postgres://operator:${MARKER}@127.0.0.1:${port}/test`],
    ['mysql', (port: number) => `mysql://operator:${MARKER}@127.0.0.1:${port}/test`],
    ['redis', (port: number) => `redis://operator:${MARKER}@127.0.0.1:${port}`],
    ['etcd', (port: number) => `http://operator:${MARKER}@127.0.0.1:${port}`],
    [
      'azure',
      (port: number) =>
        `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${Buffer.from(MARKER).toString('base64')};BlobEndpoint=http://127.0.0.1:${port}/devstoreaccount1`,
    ],
  ])('%s: an unreachable store exits 3 and prints no secret', async (kind, connectionTo) => {
    const port = await freePort();
    const connection = connectionTo(port);
    const base64 = Buffer.from(MARKER).toString('base64');
    const stdout: string[] = [];
    const stderr: string[] = [];
    for (const argv of [
      ['status', '--store', kind, '--election', 'billing', '--timeout-ms', '3000'],
      ['status', '--store', kind, '--election', 'billing', '--timeout-ms', '3000', '--connection', connection],
    ]) {
      const code = await runCli(argv, {
        output: { out: (text) => stdout.push(text), err: (text) => stderr.push(text) },
        env: argv.includes('--connection') ? {} : { LEADER_ELECTION_CONNECTION: connection },
      });
      expect(code).toBe(ExitCode.store);
    }
    const printed = `${stdout.join('\n')}\n${stderr.join('\n')}`;
    expect(printed).not.toContain(MARKER);
    expect(printed).not.toContain(base64);
    expect(stderr.length).toBeGreaterThan(0);
  });

  it('a connection the store refuses is a usage error that does not quote it', async () => {
    const run = await cli(['status', '--store', 'postgres', '--election', 'a'], undefined, {
      env: { LEADER_ELECTION_CONNECTION: `not a url ${MARKER}` },
      buildStore: undefined,
    });
    expect(run.code).toBe(ExitCode.usage);
    expect(run.stderr).toMatch(
      /^the postgres store refused its options \(connection from LEADER_ELECTION_CONNECTION\): /,
    );
    expect(run.stderr).not.toContain(MARKER);
  });
});

describe('CLI packaging', () => {
  it('commander is imported from lib/cli only, and no library entry reaches lib/cli', () => {
    const offenders: string[] = [];
    const visit = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (path !== join(ROOT, 'lib/cli')) visit(path);
        } else if (entry.name.endsWith('.ts')) {
          const source = readFileSync(path, 'utf8');
          if (/from ['"]commander['"]|import\(['"]commander['"]\)/.test(source)) offenders.push(relative(ROOT, path));
          if (/['"]\.{1,2}\/(?:[\w./-]*\/)?cli\//.test(source)) offenders.push(relative(ROOT, path));
        }
      }
    };
    visit(join(ROOT, 'lib'));
    expect(offenders).toEqual([]);
  });

  it('the bin is the built ESM file of lib/cli/bin.ts, which starts with a shebang', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      dependencies: Record<string, string>;
    };
    expect(manifest.bin).toEqual({ leaderlease: './dist/esm/cli/bin.js' });
    expect(manifest.dependencies.commander).toMatch(/^\d+\.\d+\.\d+$/);
    expect(readFileSync(join(ROOT, 'lib/cli/bin.ts'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });
});
