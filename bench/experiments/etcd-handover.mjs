// Run: node bench/experiments/etcd-handover.mjs [--trials=30] [--floor=100] [--no-fsync] [--only=2s-1]
// @ts-check
// Where an etcd handover's time goes (issue 17). Real Nest processes as in figure 3 (a leader-only
// `@Interval(20)` job; SIGTERM on the leader → the next leader's first run), each replica's store
// traced without changing what it does: its etcd3 client's lease and KV calls, the store's watch
// callback and its LeaseStore calls are wrapped on the instance to stamp send/answer times on the
// machine's monotonic clock (CLOCK_MONOTONIC, the same in every process), so one trial reads as
//
//   SIGTERM sent → received → Nest shutdown → release called → revoke sent → acked
//     → watch delivered to the follower → acquire called → grant sent → acked → txn sent → acked
//     → elected → first leader-only run
//
// for lease 2 s (deadline 1.4 s, renew 0.4 s, retry 0.5 s: figure 3) and lease 15 s (deadline 10 s,
// renew 2.5 s, retry 2 s: figure 4), with 1 and 2 followers. Beside it, etcd's own floor on the same
// server and connection type: a put, a lease grant, a revoke, a create-if-absent transaction, a
// range read, put → watch delivery and revoke → watch delivery (a second client watching), and one
// fdatasync of the data dir's filesystem. With --no-fsync the floor (and one scenario) is measured
// again on an etcd started with --unsafe-no-fsync (etcd ≥ 3.5: Debian's 3.4.23 here has no such
// flag and refuses to start), to show what the disk syncs cost — a comparison
// only, never the figure we report.
// Prints tables and writes bench/results/etcd-handover.json. No pass/fail.
//
//   node bench/experiments/etcd-handover.mjs [--trials=30] [--floor=100] [--no-fsync] [--only=2s-1]
import { spawnSync } from 'node:child_process';
import { closeSync, fdatasyncSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const arg = (/** @type {string} */ name) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const TRIALS = Number(arg('trials') ?? 30);
const FLOOR_SAMPLES = Number(arg('floor') ?? 100);
const NO_FSYNC = process.argv.includes('--no-fsync');
const ONLY = arg('only');
const TICK_MS = 20;
/** The monotonic clock shared by every process on the machine, in ms. */
const mono = () => Number(process.hrtime.bigint()) / 1e6;

const SCENARIOS = [
  { id: '2s', label: 'lease 2 s', leaseMs: 2_000, renewDeadlineMs: 1_400, renewMs: 400, retryMs: 500 },
  {
    id: '15s',
    label: 'lease 15 s / retry 2 s',
    leaseMs: 15_000,
    renewDeadlineMs: 10_000,
    renewMs: 2_500,
    retryMs: 2_000,
  },
];

if (process.env.ETCD_HANDOVER_ROLE === 'replica') {
  await replica();
} else if (!process.env.ETCD_HANDOVER_CHILD) {
  // The library is TypeScript: run again under the tests' swc loader, so this measures lib/ as it is.
  const child = spawnSync(
    process.execPath,
    ['--import', join(root, 'test/support/swc-register.mjs'), fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { cwd: root, env: { ...process.env, ETCD_HANDOVER_CHILD: '1' }, stdio: 'inherit', timeout: 3_600_000 },
  );
  process.exit(child.status ?? 1);
} else {
  await runner();
}

// ---- one replica ------------------------------------------------------------------------------

/**
 * A Nest app like bench/apps/replica.ts (decorators applied by hand: this file is plain JS), whose
 * EtcdLeaseStore is traced: `@@b {type, at}` lines, `at` on the shared monotonic clock.
 */
async function replica() {
  await import('reflect-metadata');
  const { Injectable, Module } = await import('@nestjs/common');
  const { NestFactory } = await import('@nestjs/core');
  const { Interval, ScheduleModule } = await import('@nestjs/schedule');
  const { LeaderElectionModule } = await import('../../lib/nest/leader-election.module.js');
  const { LeaderElectionService } = await import('../../lib/nest/leader-election.service.js');
  const { LeaderOnly } = await import('../../lib/nest/decorators/leader-only.decorator.js');
  const { EtcdLeaseStore } = await import('../../lib/etcd.js');
  const env = process.env;
  const out = (/** @type {string} */ type, /** @type {Record<string, unknown>} */ extra = {}) =>
    writeSync(1, `@@b ${JSON.stringify({ type, at: mono(), ...extra })}\n`);
  process.once('SIGTERM', () => out('sigterm'));
  process.on('exit', () => out('exit'));

  const store = new EtcdLeaseStore({ connection: String(env.ETCD_ENDPOINT), keyPrefix: 'bench-handover/' });
  traceStore(store, out);

  let actsInTerm = 0;
  class Jobs {
    tick() {
      actsInTerm += 1;
      if (actsInTerm === 1) out('act');
    }
  }
  const tick = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(Jobs.prototype, 'tick'));
  Object.defineProperty(
    Jobs.prototype,
    'tick',
    Reflect.decorate([Interval(TICK_MS), LeaderOnly()], Jobs.prototype, 'tick', tick) ?? tick,
  );
  Reflect.decorate([Injectable()], Jobs);
  class AppModule {}
  Reflect.decorate(
    [
      Module({
        imports: [
          ScheduleModule.forRoot(),
          LeaderElectionModule.forRoot({
            store,
            election: String(env.ELECTION),
            identity: String(env.IDENTITY),
            leaseDurationMs: Number(env.LEASE_MS),
            renewDeadlineMs: Number(env.RENEW_DEADLINE_MS),
            renewIntervalMs: Number(env.RENEW_MS),
            retryIntervalMs: Number(env.RETRY_MS),
            shutdownTimeoutMs: 5_000,
          }),
        ],
        providers: [Jobs],
      }),
    ],
    AppModule,
  );
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error'] });
  app.enableShutdownHooks();
  const service = app.get(LeaderElectionService);
  service.events$.subscribe((event) => {
    if (event.type === 'elected') {
      actsInTerm = 0;
      out('elected', { term: event.term });
    }
  });
  out('ready', { leader: service.isLeader() });
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

/**
 * Stamps, on the instance only (the store and its client do exactly what they would untraced):
 * the etcd3 calls the store makes (grant, revoke, TTL lookup, keep-alive stream, txn, range), the
 * watch stream's connection, the store's watch callback, and the LeaseStore calls the elector makes.
 * @param {any} store an EtcdLeaseStore
 * @param {(type: string, extra?: Record<string, unknown>) => void} out
 */
function traceStore(store, out) {
  // The client the store would open on its first call, opened now (same options) to wrap it.
  const etcd = store.etcd.getClient();
  /** @param {any} target @param {string} method @param {(args: any[]) => string} name */
  const wrap = (target, method, name) => {
    const original = target[method].bind(target);
    target[method] = (/** @type {any[]} */ ...args) => {
      const call = name(args);
      out(`${call}-sent`);
      const answer = original(...args);
      Promise.resolve(answer).then(
        () => out(`${call}-acked`),
        (/** @type {unknown} */ error) => out(`${call}-failed`, { error: String(error) }),
      );
      return answer;
    };
  };
  wrap(etcd.leaseClient, 'leaseGrant', () => 'grant');
  wrap(etcd.leaseClient, 'leaseRevoke', () => 'revoke');
  wrap(etcd.leaseClient, 'leaseTimeToLive', () => 'ttl');
  wrap(etcd.leaseClient, 'leaseKeepAlive', () => 'keepalive-open');
  // A txn with comparisons is the acquire's create-if-absent (or a conditional write); without, a snapshot read.
  wrap(etcd.kv, 'txn', ([request]) => (request?.compare?.length ? 'txn' : 'read-txn'));
  wrap(etcd.kv, 'range', () => 'range');
  const watch = etcd.watch.bind(etcd);
  etcd.watch = () => {
    const builder = watch();
    const watcher = builder.watcher.bind(builder);
    builder.watcher = () => {
      const w = watcher();
      w.on('connected', () => out('watch-connected'));
      w.on('delete', () => out('watch-event'));
      return w;
    };
    return builder;
  };
  for (const method of ['acquire', 'release', 'renew', 'read']) {
    const original = store[method].bind(store);
    store[method] = async (/** @type {any[]} */ ...args) => {
      out(`${method}-start`);
      try {
        const result = await original(...args);
        out(`${method}-end`, method === 'acquire' ? { acquired: result.acquired } : {});
        return result;
      } catch (error) {
        out(`${method}-end`, { error: String(error) });
        throw error;
      }
    };
  }
  const storeWatch = store.watch.bind(store);
  store.watch = (/** @type {string} */ election, /** @type {() => void} */ onMayBeFree) =>
    storeWatch(election, () => {
      out('watch-delivered');
      onMayBeFree();
    });
}

// ---- the runner -------------------------------------------------------------------------------

async function runner() {
  const { startEtcd } = await import('../../scripts/lib/etcd.mjs');
  const { Child, sleep, killAll } = await import('../lib/proc.mjs');
  const { summarize, round } = await import('../lib/stats.mjs');
  const { Etcd3 } = await import('etcd3');

  /** @param {number[]} values */
  const summary = (values) => {
    const { n, median, p95, max, min } = summarize(values);
    return { n, min: round(min, 2), median: round(median, 2), p95: round(p95, 2), max: round(max, 2) };
  };
  const load = () => loadavg().map((x) => round(x, 2));
  const log = (/** @type {string} */ message) => console.error(message);

  /**
   * etcd's own latencies on `endpoint`, from a client opened like the store's.
   * @param {string} endpoint
   */
  async function floor(endpoint) {
    const a = new Etcd3({ hosts: endpoint });
    const b = new Etcd3({ hosts: endpoint });
    /** @type {Record<string, number[]>} */
    const samples = { range: [], put: [], grant: [], revoke: [], txn: [], 'put→watch': [], 'revoke→watch': [] };
    const time = async (/** @type {string} */ name, /** @type {() => unknown} */ call) => {
      const t = mono();
      await call();
      samples[name].push(mono() - t);
    };
    try {
      // Warm both connections up.
      for (let i = 0; i < 10; i++) await Promise.all([a.put('floor/warm').value('x'), b.get('floor/warm')]);
      /** @type {(() => void) | undefined} */
      let delivered;
      const watcher = await b.watch().prefix('floor/watched/').create();
      watcher.on('put', () => delivered?.());
      watcher.on('delete', () => delivered?.());
      const seen = () => new Promise((resolve) => (delivered = () => resolve(mono())));
      for (let i = 0; i < FLOOR_SAMPLES; i++) {
        await time('range', () => a.get('floor/warm'));
        await time('put', () => a.put('floor/put').value(String(i)));
        const id = String(1_000_000 + i);
        await time('grant', () => a.leaseClient.leaseGrant({ TTL: 15, ID: id }));
        await time('txn', () =>
          a
            .if(`floor/take/${i}`, 'Create', '==', 0)
            .then(a.put(`floor/take/${i}`).value('x').lease(id), a.put('floor/term').value('x'))
            .commit(),
        );
        await time('revoke', () => a.leaseClient.leaseRevoke({ ID: id }));
        let sentAt = mono();
        let wait = seen();
        await a.put(`floor/watched/${i}`).value('x');
        samples['put→watch'].push(/** @type {number} */ (await wait) - sentAt);
        const lease = String(2_000_000 + i);
        await a.leaseClient.leaseGrant({ TTL: 15, ID: lease });
        await a.put(`floor/watched/l${i}`).value('x').lease(lease);
        await sleep(2);
        sentAt = mono();
        wait = seen();
        await a.leaseClient.leaseRevoke({ ID: lease });
        samples['revoke→watch'].push(/** @type {number} */ (await wait) - sentAt);
      }
      await watcher.cancel();
    } finally {
      a.close();
      b.close();
    }
    return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summary(v)]));
  }

  /** One write + fdatasync of 4 KiB in the folder etcd's data dir lives in (its WAL does the same per write). */
  function fsyncCost() {
    const file = join(tmpdir(), `fsync-probe-${process.pid}`);
    const fd = openSync(file, 'w');
    /** @type {number[]} */
    const times = [];
    try {
      const block = Buffer.alloc(4096, 1);
      for (let i = 0; i < FLOOR_SAMPLES; i++) {
        const t = mono();
        writeSync(fd, block);
        fdatasyncSync(fd);
        times.push(mono() - t);
      }
    } finally {
      closeSync(fd);
      rmSync(file, { force: true });
    }
    return summary(times);
  }

  let sequence = 0;
  /**
   * @param {string} endpoint
   * @param {typeof SCENARIOS[number]} s
   * @param {string} election
   */
  const spawn = (endpoint, s, election) =>
    new Child(
      `r${++sequence}`,
      fileURLToPath(import.meta.url),
      {
        ETCD_HANDOVER_ROLE: 'replica',
        ETCD_ENDPOINT: endpoint,
        ELECTION: election,
        IDENTITY: `r${sequence}`,
        LEASE_MS: String(s.leaseMs),
        RENEW_DEADLINE_MS: String(s.renewDeadlineMs),
        RENEW_MS: String(s.renewMs),
        RETRY_MS: String(s.retryMs),
      },
      { loader: true },
    );

  /** @typedef {import('../lib/proc.mjs').BenchEvent} BenchEvent */
  /** @typedef {InstanceType<typeof Child>} ChildT */

  /** A follower that is up, watching, and at a random phase of its loop (as figure 3 waits). */
  const standingFollower = async (
    /** @type {string} */ endpoint,
    /** @type {typeof SCENARIOS[number]} */ s,
    /** @type {string} */ election,
  ) => {
    const child = spawn(endpoint, s, election);
    const ready = await child.waitFor((e) => e.type === 'ready', 30_000, 'ready');
    if (ready.leader) throw new Error(`${child.name} came up as leader`);
    await child.waitFor((e) => e.type === 'watch-connected', 10_000, 'watch connected');
    await sleep(s.retryMs * (0.5 + Math.random()));
    return child;
  };

  /**
   * The trial's timeline: the old leader's stamps from SIGTERM on, the winner's from the watch on.
   * @param {number} t0 SIGTERM sent
   * @param {ChildT} leader
   * @param {ChildT} winner
   * @param {ChildT[]} followers
   */
  function breakdown(t0, leader, winner, followers) {
    const after = (/** @type {ChildT} */ c, /** @type {string} */ type, /** @type {number} */ from = t0) =>
      c.events.find((e) => e.type === type && e.at >= from)?.at;
    const L = {
      sigterm: after(leader, 'sigterm'),
      release: after(leader, 'release-start'),
      revokeSent: after(leader, 'revoke-sent'),
      revokeAcked: after(leader, 'revoke-acked'),
      exit: after(leader, 'exit'),
    };
    const watch = after(winner, 'watch-delivered');
    const acquire = after(winner, 'acquire-start', watch ?? t0);
    const W = {
      watch,
      acquire,
      readSent: after(winner, 'read-txn-sent', acquire),
      grantSent: after(winner, 'grant-sent', acquire),
      grantAcked: after(winner, 'grant-acked', acquire),
      txnSent: after(winner, 'txn-sent', acquire),
      txnAcked: after(winner, 'txn-acked', acquire),
      elected: after(winner, 'elected'),
      act: after(winner, 'act'),
    };
    // Was the winner mid-call (a poll, a renew-less follower's acquire) when the watch told it?
    const midPoll =
      watch !== undefined &&
      winner.events.some(
        (e) =>
          e.type === 'acquire-start' &&
          e.at < watch &&
          !winner.events.some((f) => f.type === 'acquire-end' && f.at > e.at && f.at <= watch),
      );
    const d = (/** @type {number | undefined} */ a, /** @type {number | undefined} */ b) =>
      a === undefined || b === undefined ? undefined : b - a;
    const allWatches = [winner, ...followers].map((c) => after(c, 'watch-delivered')).filter((x) => x !== undefined);
    return {
      midPoll,
      readOnHotPath: W.readSent !== undefined && W.grantSent !== undefined && W.readSent < W.grantSent,
      segments: {
        'SIGTERM delivered': d(t0, L.sigterm),
        'Nest shutdown → release called': d(L.sigterm, L.release),
        'release called → revoke sent': d(L.release, L.revokeSent),
        'revoke round trip': d(L.revokeSent, L.revokeAcked),
        'revoke sent → watch delivered': d(L.revokeSent, W.watch),
        'watch → acquire called': d(W.watch, W.acquire),
        'acquire called → grant sent': d(W.acquire, W.grantSent),
        'grant round trip': d(W.grantSent, W.grantAcked),
        'grant acked → txn sent': d(W.grantAcked, W.txnSent),
        'txn round trip': d(W.txnSent, W.txnAcked),
        'txn acked → elected': d(W.txnAcked, W.elected),
        'elected → first run (20 ms tick)': d(W.elected, W.act),
        'SIGTERM sent → elected': d(t0, W.elected),
        'SIGTERM sent → first run': d(t0, W.act),
        'SIGTERM sent → old leader exited': d(t0, L.exit),
        'watch spread between followers':
          allWatches.length > 1 ? Math.max(...allWatches) - Math.min(...allWatches) : undefined,
      },
    };
  }

  /**
   * @param {string} endpoint
   * @param {typeof SCENARIOS[number]} s
   * @param {number} followerCount
   * @param {number} trials
   */
  async function scenario(endpoint, s, followerCount, trials) {
    const loadBefore = load();
    const election = `h-${s.id}-${followerCount}-${Date.now().toString(36)}`;
    /** @type {ReturnType<typeof breakdown>[]} */
    const results = [];
    /** @type {string[]} */
    const failures = [];
    let leader = spawn(endpoint, s, election);
    await leader.waitFor((e) => e.type === 'act', 30_000, 'first act');
    /** @type {ChildT[]} */
    let followers = [];
    try {
      for (let trial = 0; trial < trials; trial++) {
        while (followers.length < followerCount) followers.push(await standingFollower(endpoint, s, election));
        // A random point in the leader's renew cycle.
        await sleep(Math.random() * s.renewMs);
        const marks = followers.map((f) => f.events.length);
        const t0 = mono();
        leader.signal('SIGTERM');
        try {
          const act = await Promise.any(
            followers.map((f, i) => f.waitFor((e) => e.type === 'act', 20_000, 'takeover', marks[i])),
          );
          const winner = /** @type {ChildT} */ (followers.find((f) => f.events.includes(act)));
          await leader.exited;
          const others = followers.filter((f) => f !== winner);
          results.push(breakdown(t0, leader, winner, others));
          leader = winner;
          followers = others;
        } catch (error) {
          failures.push(error instanceof AggregateError ? error.errors.map(String).join('; ') : String(error));
          await Promise.all([leader.kill(), ...followers.map((f) => f.kill())]);
          followers = [];
          leader = spawn(endpoint, s, election);
          await leader.waitFor((e) => e.type === 'act', 30_000, 'first act');
        }
      }
    } finally {
      await Promise.all([leader.kill(), ...followers.map((f) => f.kill())]);
    }
    const keys = Object.keys(results[0]?.segments ?? {});
    /** @type {Record<string, ReturnType<typeof summary>>} */
    const segments = {};
    for (const key of keys) {
      segments[key] = summary(
        results
          .map((r) => /** @type {Record<string, number | undefined>} */ (r.segments)[key])
          .filter((v) => v !== undefined),
      );
    }
    return {
      scenario: s.label,
      followers: followerCount,
      timings: { leaseMs: s.leaseMs, renewDeadlineMs: s.renewDeadlineMs, renewMs: s.renewMs, retryMs: s.retryMs },
      trials: results.length,
      failures,
      midPoll: results.filter((r) => r.midPoll).length,
      readOnHotPath: results.filter((r) => r.readOnHotPath).length,
      load: { before: loadBefore, after: load() },
      segments,
      raw: results.map((r) => r.segments['SIGTERM sent → first run']).map((v) => round(v ?? null, 1)),
    };
  }

  const printScenario = (/** @type {Awaited<ReturnType<typeof scenario>>} */ r) => {
    console.log(
      `\n${r.scenario}, ${r.followers} follower(s): ${r.trials} trials (${r.failures.length} failed), ` +
        `watch during a poll: ${r.midPoll}, read before grant: ${r.readOnHotPath}; load ${r.load.before.join(' ')} → ${r.load.after.join(' ')}`,
    );
    console.log(`  ${'segment'.padEnd(36)}${'median'.padStart(9)}${'p95'.padStart(9)}${'max'.padStart(9)}`);
    for (const [key, s] of Object.entries(r.segments)) {
      console.log(
        `  ${key.padEnd(36)}${String(s.median).padStart(9)}${String(s.p95).padStart(9)}${String(s.max).padStart(9)}`,
      );
    }
  };
  const printFloor = (/** @type {string} */ title, /** @type {Record<string, ReturnType<typeof summary>>} */ f) => {
    console.log(`\n${title} (ms, ${FLOOR_SAMPLES} sequential calls each: median / p95)`);
    for (const [key, s] of Object.entries(f))
      if (key !== 'load') console.log(`  ${key.padEnd(16)}${String(s.median).padStart(8)} / ${s.p95}`);
  };

  process.on('SIGINT', () => {
    killAll();
    process.exit(130);
  });

  const started = Date.now();
  const loadAtStart = load();
  const etcd = await startEtcd();
  /** @type {Record<string, any>} */
  const out = {
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    etcdVersion: spawnSync('etcd', ['--version']).stdout?.toString().split('\n')[0],
    dataDir: `${tmpdir()} (etcd-test-*: scripts/lib/etcd.mjs)`,
    date: new Date().toISOString(),
    loadAtStart,
    trialsPerScenario: TRIALS,
  };
  try {
    out.fsync = { ...fsyncCost(), load: load() };
    console.log(`\nfdatasync of 4 KiB in ${tmpdir()}: median ${out.fsync.median} ms, p95 ${out.fsync.p95}`);
    out.floor = { ...(await floor(etcd.endpoint)), load: load() };
    printFloor('etcd floor (fsync on)', out.floor);
    out.handover = [];
    for (const s of SCENARIOS) {
      for (const followers of [1, 2]) {
        if (ONLY && ONLY !== `${s.id}-${followers}`) continue;
        log(`${s.label}, ${followers} follower(s)…`);
        const r = await scenario(etcd.endpoint, s, followers, TRIALS);
        printScenario(r);
        out.handover.push(r);
      }
    }
  } finally {
    await etcd.stop();
  }
  if (NO_FSYNC) {
    const unsafe = await startEtcd({ args: ['--unsafe-no-fsync'] });
    try {
      out.noFsync = { floor: { ...(await floor(unsafe.endpoint)), load: load() } };
      printFloor('etcd floor with --unsafe-no-fsync (comparison only)', out.noFsync.floor);
      const r = await scenario(unsafe.endpoint, SCENARIOS[0], 1, TRIALS);
      printScenario(r);
      out.noFsync.handover = r;
    } finally {
      await unsafe.stop();
    }
  }
  out.seconds = Math.round((Date.now() - started) / 1000);
  out.loadAtEnd = load();
  mkdirSync(join(here, '../results'), { recursive: true });
  writeFileSync(join(here, 'results/etcd-handover.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log(`\n${out.seconds} s; wrote bench/results/etcd-handover.json`);
}
