// OpenTelemetry metrics end to end: a real SDK MeterProvider with the Prometheus exporter, scraped
// over HTTP as Prometheus would, while real Nest apps elect over an in-memory store with faults
// injected. Names and labels are the ones docs/reference/metrics.md and the alert rules use.
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type INestApplication, Injectable } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import pg from 'pg';
import { Elector } from '../../lib/election/elector.js';
import { resolveMetrics } from '../../lib/metrics/otel-api.js';
import { LeaderOnly } from '../../lib/nest/decorators/leader-only.decorator.js';
import { OnElected } from '../../lib/nest/decorators/leadership-hooks.decorator.js';
import { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import { PostgresLeaseStore } from '../../lib/postgres.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';
import { PG_URL, uniqueName } from '../setup/servers.js';
import { FaultInjectingStore } from '../support/fault-injecting.store.js';
import { parsePrometheusText, type Sample, samplesOf, sampleValue } from '../support/prometheus-text.js';
import {
  CaptureLogger,
  closeAll,
  createApp,
  electionOf,
  LEASE_MS,
  RETRY_MS,
  SLACK_MS,
  sleep,
  waitFor,
} from './helpers.js';

@Injectable()
class Jobs {
  @LeaderOnly()
  async tick(): Promise<string> {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return 'ran';
  }

  @LeaderOnly()
  sync(): string {
    return 'ran';
  }
}

/** Leader work watched for stuck calls: one that hangs, a pump that opted out, a job that opted out. */
@Injectable()
class Watched {
  @LeaderOnly()
  hang(): Promise<never> {
    return new Promise<never>(() => undefined);
  }

  @LeaderOnly({ stuckAfterMs: false })
  longBatch(): string {
    return 'ran';
  }

  @OnElected({ stuckAfterMs: false })
  pump(): Promise<never> {
    return new Promise<never>(() => undefined);
  }
}

const STORE = 'InMemoryLeaseStore';
/** The Prometheus exporter's default adds the instrumentation scope to every series. */
const SCOPE = { otel_scope_name: '@leaderlease/nestjs' };

/** The label names of every sample named `name` (sorted, one entry per distinct set). */
function labelSets(samples: Sample[], name: string): string[][] {
  const sets = new Set(samplesOf(samples, name).map((sample) => Object.keys(sample.labels).sort().join(',')));
  return [...sets].map((set) => set.split(','));
}
const execFileAsync = promisify(execFile);

describe('OpenTelemetry metrics (Prometheus exporter, real scrape)', () => {
  let provider: MeterProvider;
  let server: Server;
  let url: string;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    const exporter = new PrometheusExporter({ preventServerStart: true });
    provider = new MeterProvider({ readers: [exporter] });
    metrics.setGlobalMeterProvider(provider);
    server = createServer((req, res) => exporter.getMetricsRequestHandler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  });

  afterEach(() => closeAll(apps));

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await provider.shutdown();
    metrics.disable();
  });

  async function scrape(): Promise<Sample[]> {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    return parsePrometheusText(await res.text());
  }

  async function app(
    store: InMemoryLeaseStore | FaultInjectingStore | PostgresLeaseStore,
    election: string,
    identity: string,
    timings: { leaseDurationMs?: number; retryIntervalMs?: number } = { retryIntervalMs: RETRY_MS },
  ) {
    const created = await createApp({
      election: { store, election, identity, ...timings },
      providers: [Jobs],
      schedule: false,
    });
    apps.push(created);
    return created;
  }

  it('shows every series from startup, counters at 0, before any event', async () => {
    const leader = await app(new InMemoryLeaseStore(), 'm-startup', 'a');
    expect(electionOf(leader).isLeader()).toBe(true);
    const term = electionOf(leader).term as number;
    const s = await scrape();
    const election = { election: 'm-startup' };
    expect(sampleValue(s, 'leader_election_is_leader', { ...election, identity: 'a' })).toBe(1);
    expect(sampleValue(s, 'leader_election_term', election)).toBe(term);
    expect(sampleValue(s, 'leader_election_leaderless_seconds', election)).toBe(0);
    // Elected once during init (counted), the others at 0.
    expect(sampleValue(s, 'leader_election_transitions_total', { ...election, type: 'elected' })).toBe(1);
    expect(sampleValue(s, 'leader_election_transitions_total', { ...election, type: 'revoked' })).toBe(0);
    expect(sampleValue(s, 'leader_election_transitions_total', { ...election, type: 'leader_changed' })).toBe(1);
    for (const handler of ['Jobs.tick', 'Jobs.sync']) {
      expect(sampleValue(s, 'leader_election_leader_only_runs_total', { ...election, handler })).toBe(0);
      expect(sampleValue(s, 'leader_election_leader_only_skipped_total', { ...election, handler })).toBe(0);
    }
    for (const kind of ['transient', 'fatal', 'lost']) {
      expect(sampleValue(s, 'leader_election_store_failures_total', { store: STORE, kind })).toBe(0);
    }
    // The first acquire ran during init, timed.
    const acquired = { store: STORE, operation: 'acquire', outcome: 'ok' };
    expect(sampleValue(s, 'leader_election_store_call_duration_seconds_count', acquired)).toBeGreaterThanOrEqual(1);
    expect(samplesOf(s, 'leader_election_store_call_duration_seconds_bucket', { ...acquired, le: '3.3' })).toHaveLength(
      1,
    );
  });

  it("labels every series with exactly the documented labels (plus the exporter's otel_scope_name)", async () => {
    const store = new InMemoryLeaseStore();
    const leader = await app(store, 'm-labels', 'a');
    await app(store, 'm-labels', 'b');
    expect(await leader.get(Jobs).tick()).toBe('ran');
    const s = await scrape();
    const exactly = (...names: string[]) => [[...names, 'otel_scope_name'].sort()];
    expect(labelSets(s, 'leader_election_is_leader')).toEqual(exactly('election', 'identity'));
    expect(labelSets(s, 'leader_election_term')).toEqual(exactly('election'));
    expect(labelSets(s, 'leader_election_leaderless_seconds')).toEqual(exactly('election'));
    expect(labelSets(s, 'leader_election_transitions_total')).toEqual(exactly('election', 'type'));
    expect(labelSets(s, 'leader_election_store_failures_total')).toEqual(exactly('kind', 'store'));
    expect(labelSets(s, 'leader_election_leader_only_runs_total')).toEqual(exactly('election', 'handler'));
    expect(labelSets(s, 'leader_election_leader_only_skipped_total')).toEqual(exactly('election', 'handler'));
    expect(labelSets(s, 'leader_election_leader_only_duration_seconds_count')).toEqual(exactly('election', 'handler'));
    expect(labelSets(s, 'leader_election_leader_only_duration_seconds_bucket')).toEqual(
      exactly('election', 'handler', 'le'),
    );
    expect(labelSets(s, 'leader_election_store_call_duration_seconds_sum')).toEqual(
      exactly('operation', 'outcome', 'store'),
    );
    expect(labelSets(s, 'leader_election_store_call_duration_seconds_bucket')).toEqual(
      exactly('le', 'operation', 'outcome', 'store'),
    );
    expect(samplesOf(s, 'leader_election_is_leader', { election: 'm-labels', identity: 'a' })[0].labels).toEqual({
      election: 'm-labels',
      identity: 'a',
      ...SCOPE,
    });
  });

  it('shows stuck work per handler from startup (0), how long a stuck call has run, and not for opted-out work', async () => {
    const logger = new CaptureLogger();
    const watched = await createApp({
      election: {
        store: new InMemoryLeaseStore(),
        election: 'm-stuck',
        identity: 'a',
        stuckAfterMs: 300,
        // Shutdown need not wait for calls that never return.
        shutdownTimeoutMs: 100,
      },
      providers: [Watched],
      schedule: false,
      logger,
    });
    apps.push(watched);
    expect(electionOf(watched).isLeader()).toBe(true);
    const stuck = (s: Sample[], handler: string) =>
      samplesOf(s, 'leader_election_stuck_work_seconds', { election: 'm-stuck', handler });
    const startup = await scrape();
    expect(stuck(startup, 'Watched.hang').map((sample) => sample.value)).toEqual([0]);
    expect(labelSets(startup, 'leader_election_stuck_work_seconds')).toEqual([
      ['election', 'handler', 'otel_scope_name'],
    ]);
    // Opted out (stuckAfterMs: false): never stuck, so no series that could only ever read 0.
    expect(stuck(startup, 'Watched.longBatch')).toEqual([]);
    expect(stuck(startup, 'Watched.pump')).toEqual([]);

    const startedAt = performance.now();
    void watched.get(Watched).hang();
    void watched.get(LeaderElectionService).runIfLeader('nightly-export', () => new Promise(() => undefined));
    await waitFor('stuck', () => electionOf(watched).health().healthy === false, 300 + SLACK_MS);
    await sleep(100);
    const during = await scrape();
    const hung = stuck(during, 'Watched.hang')[0].value;
    expect(hung).toBeGreaterThanOrEqual(0.3);
    expect(hung).toBeLessThanOrEqual((performance.now() - startedAt) / 1000);
    // runIfLeader work under the name it was given, from its first call.
    expect(stuck(during, 'nightly-export')[0].value).toBeGreaterThanOrEqual(0.3);
    expect(stuck(during, 'Watched.pump')).toEqual([]);
    // One line at init says metrics record.
    expect(
      logger.matching('log', /^metrics: recording through the registered OpenTelemetry MeterProvider/),
    ).toHaveLength(1);
  });

  it('counts @LeaderOnly runs with their duration on the leader, and skips on a follower', async () => {
    const store = new InMemoryLeaseStore();
    const leader = await app(store, 'm-runs', 'a');
    const follower = await app(store, 'm-runs', 'b');
    expect(electionOf(leader).isLeader()).toBe(true);
    expect(await leader.get(Jobs).tick()).toBe('ran');
    expect(leader.get(Jobs).sync()).toBe('ran');
    expect(await follower.get(Jobs).tick()).toBeUndefined();
    expect(await follower.get(Jobs).tick()).toBeUndefined();

    const s = await scrape();
    const tick = { election: 'm-runs', handler: 'Jobs.tick' };
    expect(sampleValue(s, 'leader_election_leader_only_runs_total', tick)).toBe(1);
    expect(sampleValue(s, 'leader_election_leader_only_skipped_total', tick)).toBe(2);
    expect(sampleValue(s, 'leader_election_leader_only_duration_seconds_count', tick)).toBe(1);
    // Timed until the promise settled, not until it was returned: the job sleeps 20 ms.
    expect(sampleValue(s, 'leader_election_leader_only_duration_seconds_sum', tick)).toBeGreaterThanOrEqual(0.015);
    expect(sampleValue(s, 'leader_election_leader_only_runs_total', { election: 'm-runs', handler: 'Jobs.sync' })).toBe(
      1,
    );
    // Each replica says whether it leads, under its own identity.
    expect(sampleValue(s, 'leader_election_is_leader', { election: 'm-runs', identity: 'a' })).toBe(1);
    expect(sampleValue(s, 'leader_election_is_leader', { election: 'm-runs', identity: 'b' })).toBe(0);
    // The follower's acquire attempts found the lease held: a call that worked, not a failure.
    expect(
      sampleValue(s, 'leader_election_store_call_duration_seconds_count', {
        store: STORE,
        operation: 'acquire',
        outcome: 'held',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts store failures by kind, the revocation, and how long no leader was known', async () => {
    const store = new FaultInjectingStore(new InMemoryLeaseStore());
    const leader = await app(store, 'm-faults', 'a');
    const election = electionOf(leader);
    expect(election.isLeader()).toBe(true);
    const before = await scrape();
    const failures = (s: Sample[], kind: string) =>
      sampleValue(s, 'leader_election_store_failures_total', { store: STORE, kind });

    // The store now says the lease is not ours, then is unreachable: leadership ends, nobody leads.
    store.set('transient', 'acquire', 'read', 'release');
    store.set('lost', 'renew');
    await waitFor('revocation', () => !election.isLeader(), LEASE_MS + SLACK_MS);
    await waitFor('a failed acquire', () => store.calls.acquire >= 2, RETRY_MS * 3 + SLACK_MS);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const during = await scrape();
    const labels = { election: 'm-faults' };
    expect(sampleValue(during, 'leader_election_transitions_total', { ...labels, type: 'revoked' })).toBe(1);
    expect(sampleValue(during, 'leader_election_is_leader', { ...labels, identity: 'a' })).toBe(0);
    expect(sampleValue(during, 'leader_election_term', labels)).toBe(0);
    expect(failures(during, 'lost') - failures(before, 'lost')).toBeGreaterThanOrEqual(1);
    expect(failures(during, 'transient') - failures(before, 'transient')).toBeGreaterThanOrEqual(1);
    expect(failures(during, 'fatal')).toBe(0);
    expect(sampleValue(during, 'leader_election_leaderless_seconds', labels)).toBeGreaterThan(0.2);
    expect(
      sampleValue(during, 'leader_election_store_call_duration_seconds_count', {
        store: STORE,
        operation: 'renew',
        outcome: 'lost',
      }),
    ).toBeGreaterThanOrEqual(1);

    // The store recovers: elected again, and the leaderless gauge drops back to 0.
    store.set('pass');
    await waitFor('re-election', () => election.isLeader(), RETRY_MS * 3 + SLACK_MS);
    const after = await scrape();
    expect(sampleValue(after, 'leader_election_transitions_total', { ...labels, type: 'elected' })).toBe(2);
    expect(sampleValue(after, 'leader_election_leaderless_seconds', labels)).toBe(0);
    expect(sampleValue(after, 'leader_election_term', labels)).toBe(election.term);
  });

  it('counts a follower cut off from the store as leaderless once its calls fail and a lease passed without news', async () => {
    // The leader is another replica (a lease held in the shared store): this process has one series.
    const shared = new InMemoryLeaseStore();
    const held = await shared.acquire({
      election: 'm-cutoff',
      identity: 'a',
      leaseDurationMs: 60_000,
      signal: new AbortController().signal,
    });
    expect(held.acquired).toBe(true);
    const cutOff = new FaultInjectingStore(shared);
    // The gauge counts from the last answer that named a leader, which came up to a poll before the cut.
    let lastAnswerAt = Date.now();
    const acquire = cutOff.acquire.bind(cutOff);
    cutOff.acquire = async (request) => {
      const result = await acquire(request);
      lastAnswerAt = Date.now();
      return result;
    };
    const follower = await app(cutOff, 'm-cutoff', 'b');
    expect(electionOf(follower).leaderId).toBe('a');
    const leaderless = async () =>
      sampleValue(await scrape(), 'leader_election_leaderless_seconds', { election: 'm-cutoff' });
    expect(await leaderless()).toBe(0);
    const cutAt = Date.now();
    cutOff.set('transient');
    await sleep(LEASE_MS / 2);
    // Within a lease: the last leader read is still believable. (The store hinted a 60 s lease, but
    // a failed call says its watch is out of reach too: the hint vouches no longer than a lease.)
    expect(await leaderless()).toBe(0);
    await sleep(LEASE_MS / 2 + RETRY_MS * 2);
    const seconds = await leaderless();
    expect(electionOf(follower).leaderId).toBe('a'); // what the elector still says
    expect(seconds).toBeGreaterThan(LEASE_MS / 1000);
    expect(lastAnswerAt).toBeLessThanOrEqual(cutAt);
    expect(seconds).toBeLessThanOrEqual((Date.now() - lastAnswerAt) / 1000 + 0.1);
    cutOff.set('pass');
    await waitFor(
      'the follower to hear from the store',
      () => cutOff.calls.acquire > 0 && electionOf(follower).health().healthy,
      LEASE_MS + SLACK_MS,
    );
    await sleep(RETRY_MS * 3);
    expect(await leaderless()).toBe(0);
  });

  it('reads 0 on a healthy follower of a push store (PostgreSQL) in steady state, scraped every 100 ms', async () => {
    // A follower with a watch polls on the store's expiry hint: up to a whole lease and more apart.
    // The leader is another replica (a bare Elector: no metrics of its own in this process).
    const table = uniqueName('metrics');
    const leaseDurationMs = 2_000;
    const leaderStore = new PostgresLeaseStore({ connection: PG_URL, table });
    const followerStore = new PostgresLeaseStore({ connection: PG_URL, table });
    const leader = new Elector({ store: leaderStore, election: 'm-steady', identity: 'a', leaseDurationMs });
    try {
      await leader.start();
      expect(leader.isLeader()).toBe(true);
      const follower = await app(followerStore, 'm-steady', 'b', { leaseDurationMs });
      expect(electionOf(follower).leaderId).toBe('a');
      const readings: number[] = [];
      const until = Date.now() + leaseDurationMs * 4;
      while (Date.now() < until) {
        readings.push(sampleValue(await scrape(), 'leader_election_leaderless_seconds', { election: 'm-steady' }));
        await sleep(100);
      }
      expect(leader.isLeader()).toBe(true);
      expect(electionOf(follower).leaderId).toBe('a');
      expect(readings.length).toBeGreaterThan(40);
      expect(readings.filter((seconds) => seconds !== 0)).toEqual([]);
    } finally {
      await leader.stop({ release: true });
      await leaderStore.close();
      await closeAll(apps);
      await followerStore.close();
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP TABLE IF EXISTS "${table}"`);
      await client.end();
    }
  });

  it('reports a closed app as not leading (the SDK keeps the last value it was given)', async () => {
    const closing = await app(new InMemoryLeaseStore(), 'm-closed', 'a');
    const labels = { election: 'm-closed', identity: 'a' };
    expect(sampleValue(await scrape(), 'leader_election_is_leader', labels)).toBe(1);
    await closing.close();
    for (let scrapes = 0; scrapes < 2; scrapes++) {
      const s = await scrape();
      expect(sampleValue(s, 'leader_election_is_leader', labels)).toBe(0);
      expect(sampleValue(s, 'leader_election_term', { election: 'm-closed' })).toBe(0);
    }
  });
});

describe('OpenTelemetry API without an SDK', () => {
  const apps: INestApplication[] = [];
  afterEach(() => closeAll(apps));

  it('records nothing (every hot path skips its bookkeeping) and the app works', async () => {
    metrics.disable();
    expect((await resolveMetrics()).meter).toBeUndefined();
    const store = new InMemoryLeaseStore();
    const logger = new CaptureLogger();
    const leader = await createApp({
      election: { store, election: 'm-nosdk', identity: 'a' },
      providers: [Jobs],
      logger,
    });
    // One line at init says so, and why.
    expect(
      logger.matching('log', /^metrics: not recorded: @opentelemetry\/api is installed but no SDK MeterProvider/),
    ).toHaveLength(1);
    apps.push(leader);
    const follower = await createApp({ election: { store, election: 'm-nosdk', identity: 'b' }, providers: [Jobs] });
    apps.push(follower);
    expect(await leader.get(Jobs).tick()).toBe('ran');
    expect(await follower.get(Jobs).tick()).toBeUndefined();
  });
});

describe('without @opentelemetry/api installed', () => {
  it('elects and runs @LeaderOnly jobs in a process where the API cannot be resolved', async () => {
    const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
    const { stdout } = await execFileAsync(
      process.execPath,
      [
        '--import',
        join(root, 'test/support/swc-register.mjs'),
        '--import',
        join(root, 'test/fixtures/block-otel.mjs'),
        join(root, 'test/fixtures/without-otel-app.ts'),
      ],
      { cwd: root, timeout: 30_000 },
    );
    expect(JSON.parse(stdout.trim().split('\n').pop() as string)).toEqual({
      apiResolvable: 'ERR_MODULE_NOT_FOUND',
      leader: true,
      follower: false,
      leaderRun: 'ran',
      followerRun: null,
      health: { healthy: true },
    });
  });
});
