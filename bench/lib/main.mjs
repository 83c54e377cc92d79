// The benchmark run behind bench/run.mjs: phases, job scheduling, the table and latest.json.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startAzurite } from '../../test/setup/azurite.ts';
import { startEtcd } from '../../test/setup/etcd.ts';
import { MYSQL_URL, PG_URL, REDIS_URL } from '../../test/setup/servers.ts';
import { contention } from '../figures/contention.mjs';
import { changeChain, coldStarts, pauseTrials } from '../figures/failover.mjs';
import { decoratorOverhead, guardOverhead } from '../figures/overhead.mjs';
import { DEFAULTS, etcd3Election, FAST, JITTER, nle, ours, PUSH_STORES, TICK_MS } from './impls.mjs';
import { Child, killAll } from './proc.mjs';
import { round, summarize } from './stats.mjs';

const ALL_STORES = ['azure', 'postgres', 'mysql', 'redis', 'etcd'];
/**
 * Azure Blob Storage list price of "All other operations" (Hot tier, LRS, US East, USD per 10,000),
 * used for the per-instance-month cost. Lease Blob (acquire/renew/release), Get Blob Properties and
 * Set Blob Metadata are all billed as "Other" on general-purpose v2 accounts (Microsoft Learn, "Map
 * each REST operation to a price", ms.date 2025-05-14). Override with BENCH_AZURE_OTHER_PER_10K.
 */
const AZURE_OTHER_PER_10K = Number(process.env.BENCH_AZURE_OTHER_PER_10K ?? 0.0044);
const AZURE_PRICE_SOURCE =
  'azure.microsoft.com/pricing/details/storage/blobs (Hot, LRS, US East, "All other operations"), list price as of 2025; ' +
  'operation categories: learn.microsoft.com/azure/storage/blobs/map-rest-apis-transaction-categories (2025-05-14)';
const HOURS_PER_MONTH = 730;

const seconds = (ms) => `${ms / 1000} s`;
const settingsText = (t) =>
  `lease ${seconds(t.leaseMs)}, deadline ${seconds(t.renewDeadlineMs)}, renew ${seconds(t.renewMs)}, retry ${seconds(t.retryMs)}`;

export async function main({ root, startedAt, quick }) {
  const log = (message) => console.log(`[${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${message}`);
  const N = quick ? 3 : Number(process.env.BENCH_TRIALS ?? 10);
  const PAUSE_N = quick ? 2 : Number(process.env.BENCH_PAUSE_TRIALS ?? 10);
  const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 12);
  const rows = [];
  const errors = [];
  const machine = machineInfo();
  log(
    `machine: ${machine.cpuModel} ×${machine.cpus}, ${machine.memoryGiB} GiB, ${machine.os}; Node ${process.version}`,
  );

  // ---- servers: a store whose server is missing shows an error, the others still run ---------
  const available = new Set();
  const started = [];
  const serverEnv = { PG_URL, MYSQL_URL, REDIS_URL };
  await Promise.all([
    startAzurite().then(
      (azurite) => {
        started.push(azurite);
        available.add('azure');
        serverEnv.AZURE_CONNECTION_STRING = azurite.connectionString;
        log(`Azurite on ${azurite.port}`);
      },
      (error) => errors.push(`Azurite did not start, no Azure figures: ${error.message}`),
    ),
    startEtcd().then(
      (etcd) => {
        started.push(etcd);
        available.add('etcd');
        serverEnv.ETCD_ENDPOINT = etcd.endpoint;
        log(`etcd at ${etcd.endpoint}`);
      },
      (error) => errors.push(`etcd did not start, no etcd figures: ${error.message}`),
    ),
    ...[
      ['postgres', PG_URL],
      ['mysql', MYSQL_URL],
      ['redis', REDIS_URL],
    ].map(async ([store, url]) => {
      if (await reachable(url)) available.add(store);
      else errors.push(`${store}: nothing listens at ${new URL(url).host}, no ${store} figures`);
    }),
  ]);
  Object.assign(process.env, serverEnv);
  const STORES = ALL_STORES.filter((store) => available.has(store));
  const stopServers = async () => {
    killAll();
    await Promise.allSettled(started.map((service) => service.stop()));
  };
  process.once('SIGINT', () => void stopServers().finally(() => process.exit(130)));

  try {
    // ---- phase A: CPU-bound figures, alone on the machine (as far as this run goes) ----------
    log('figure 1: decorator overhead (tinybench)…');
    if (quick) process.env.DECORATOR_TIME_MS = '500';
    await attempt(errors, 'figure 1', async () => {
      const tasks = await decoratorOverhead();
      const base = tasks.plain;
      for (const [key, label] of [
        ['plain', 'plain method (no decorator)'],
        ['leader', '@LeaderOnly() method, on the leader'],
        ['follower', '@LeaderOnly() method, on a follower (skipped)'],
      ]) {
        const t = tasks[key];
        rows.push({
          figure: 1,
          metric: 'ns per call',
          subject: label,
          settings: `batches of ${t.callsPerBatch} calls`,
          unit: 'ns',
          n: t.n,
          median: t.median,
          p95: t.p95,
          max: t.max,
          bound: key === 'plain' ? null : base.median,
          boundText: key === 'plain' ? '—' : 'the plain call',
          added: key === 'plain' ? null : t.median - base.median,
          note: key === 'plain' ? undefined : `adds ${Math.round(t.median - base.median)} ns per call`,
        });
      }
    });
    log('figure 2: guard overhead (autocannon)…');
    await attempt(errors, 'figure 2', async () => {
      const g = await guardOverhead(quick ? { rounds: 2, seconds: 2 } : {});
      const settings = `${g.connections} connections, ${g.rounds} × ${g.seconds} s per route`;
      rows.push(rowFrom(2, 'requests/s', 'GET /plain (no guard)', settings, 'req/s', g.plain, null, '—'));
      rows.push(
        rowFrom(
          2,
          'requests/s',
          'GET /guarded (@LeaderOnly, leader)',
          settings,
          'req/s',
          g.guarded,
          g.plain.median,
          'the plain route',
        ),
      );
      rows.push({
        ...rowFrom(2, 'guarded ÷ plain', 'throughput ratio (per round)', settings, '×', g.ratio, 1, 'no cost'),
        digits: 3,
      });
      rows.push({
        figure: 2,
        metric: 'requests/s',
        subject: 'GET /guarded on a follower (503 refusals)',
        settings: '1 round',
        unit: 'req/s',
        n: 1,
        median: g.followerRefusals.rps,
        p95: null,
        max: null,
        bound: null,
        boundText: '—',
      });
      if (g.errors || g.non2xx) errors.push(`figure 2: ${g.errors} errors, ${g.non2xx} non-2xx answers on the leader`);
    });

    // ---- phase B: leadership changes between real processes, all stores in parallel ----------
    log(`figures 3–5: ${N} trials per figure, up to ${CONCURRENCY} trial chains at once…`);
    const nleSchemas = available.has('postgres') ? await prepareNleSchemas(10) : [];
    const calls = new Child('calls', 'bench/apps/calls.ts', {
      STORES: STORES.join(','),
      WINDOW_MS: String(quick ? 20_000 : 120_000),
    });
    const results = new Map();
    const collect = (key) => {
      if (!results.has(key)) results.set(key, { samples: [], library: [], trials: [], failures: [] });
      return results.get(key);
    };
    const jobs = [];
    // Cold starts time process boots: they run after the busy phase, two at a time.
    const coldJobs = [];
    const split = (n, parts) =>
      Array.from({ length: parts }, (_, i) => Math.floor(n / parts) + (i < n % parts ? 1 : 0)).filter(Boolean);
    const fig3Timings = (store) => (store === 'azure' ? DEFAULTS : FAST);
    for (const store of STORES) {
      const timings = fig3Timings(store);
      const impl = ours(store, timings);
      const long = store === 'azure';
      for (const n of split(N, long ? 2 : 1)) {
        jobs.push({
          key: `3:crash:${store}`,
          est: n * (timings.leaseMs + 4_000),
          run: () => changeChain(impl, 'crash', n, { timeoutMs: timings.leaseMs * 2 + 10_000, log }),
        });
      }
      jobs.push({
        key: `3:handover:${store}`,
        est: N * 4_000,
        run: () => changeChain(impl, 'handover', N, { timeoutMs: 20_000, log }),
      });
      coldJobs.push({ key: `3:cold:${store}`, est: N * 3_000, run: () => coldStarts(impl, N, { log }) });
    }
    let schema = 0;
    const side = [
      { name: 'ours-pg', make: () => ours('postgres', DEFAULTS), crashParts: 2, pauseParts: 3, capMs: 40_000 },
      { name: 'ours-etcd', make: () => ours('etcd', DEFAULTS), crashParts: 2, pauseParts: 3, capMs: 40_000 },
      {
        name: 'nle',
        make: () => nle(DEFAULTS, nleSchemas[schema++ % nleSchemas.length]),
        crashParts: 4,
        pauseParts: 5,
        capMs: 75_000,
      },
      { name: 'etcd3', make: () => etcd3Election(DEFAULTS), crashParts: 2, pauseParts: 3, capMs: 40_000 },
    ].filter((s) => available.has(s.name === 'ours-pg' || s.name === 'nle' ? 'postgres' : 'etcd'));
    for (const s of side) {
      const perTrial = s.name === 'nle' ? 42_000 : 20_000;
      for (const n of split(N, s.crashParts)) {
        jobs.push({
          key: `4:crash:${s.name}`,
          est: n * perTrial,
          run: () => changeChain(s.make(), 'crash', n, { timeoutMs: s.capMs + 20_000, log }),
        });
      }
      jobs.push({
        key: `4:handover:${s.name}`,
        est: N * 5_000,
        run: () => changeChain(s.make(), 'handover', N, { timeoutMs: 20_000, log }),
      });
      for (const n of split(PAUSE_N, s.pauseParts)) {
        jobs.push({
          key: `4:pause:${s.name}`,
          est: n * (perTrial + 6_000),
          run: () => pauseTrials(s.make(), n, { capMs: s.capMs, log }),
        });
      }
    }
    jobs.sort((a, b) => b.est - a.est);
    const phaseStart = Date.now();
    let done = 0;
    const runJob = async (job) => {
      const result = collect(job.key);
      try {
        const r = await job.run();
        result.samples.push(...(r.samples ?? r.fromSpawn ?? []));
        result.library.push(...(r.library ?? []));
        result.trials.push(...(r.trials ?? []));
        result.failures.push(...(r.failures ?? []));
      } catch (error) {
        result.failures.push(error.message);
      }
      done += 1;
      log(`  ${job.key} done (${done}/${jobs.length + coldJobs.length})`);
    };
    await pool(jobs, CONCURRENCY, runJob);
    log(`chains took ${((Date.now() - phaseStart) / 1000).toFixed(0)} s; cold starts…`);
    await pool(coldJobs, 2, runJob);
    log('waiting for the calls window…');
    let callsResult;
    await attempt(errors, 'figure 5', async () => {
      callsResult = await calls.waitFor((e) => e.type === 'result', 300_000, 'calls result');
    });
    await calls.kill();
    const rtt = {};
    for (const store of STORES) {
      const r = callsResult?.stores?.[store];
      rtt[store] = r?.rttMs ? summarize(r.rttMs).median : 1;
    }

    // Figure 3 rows.
    for (const store of STORES) {
      const t = fig3Timings(store);
      const settings = settingsText(t);
      const push = PUSH_STORES.has(store);
      const crash = collect(`3:crash:${store}`);
      const handover = collect(`3:handover:${store}`);
      const cold = collect(`3:cold:${store}`);
      rows.push(
        failRow(
          rowFrom(
            3,
            'kill -9 → next leader acting',
            `ours/${store}`,
            settings,
            'ms',
            summarize(crash.samples),
            t.leaseMs + t.retryMs * (1 + JITTER) + TICK_MS,
            'lease + retry (+jitter, +tick)',
          ),
          crash.failures,
        ),
      );
      rows.push(
        failRow(
          rowFrom(
            3,
            'SIGTERM → next leader acting',
            `ours/${store}`,
            settings,
            'ms',
            summarize(handover.samples),
            push ? 3 * rtt[store] + TICK_MS : t.retryMs * (1 + JITTER) + TICK_MS,
            push ? '1 round trip: release→notify→acquire (+tick)' : 'one retry interval (+jitter, +tick)',
          ),
          handover.failures,
        ),
      );
      rows.push(
        failRow(
          rowFrom(
            3,
            'cold start → first leader acting',
            `ours/${store}`,
            `2 processes at once; ${settings}`,
            'ms',
            summarize(cold.samples),
            null,
            'process + Nest boot (no bound)',
          ),
          cold.failures,
        ),
      );
      rows.push(
        rowFrom(
          3,
          'cold start: first acquire sent → elected',
          `ours/${store}`,
          "the library's share of the above",
          'ms',
          summarize(cold.library),
          rtt[store],
          '1 round trip (cold: + connect, table/container setup)',
        ),
      );
    }

    // Figure 4 rows.
    const sideInfo = {
      'ours-pg': {
        subject: 'nestjs-leader-election (PostgreSQL)',
        crashBound: DEFAULTS.leaseMs + DEFAULTS.retryMs * (1 + JITTER) + TICK_MS,
        crashText: 'lease + retry',
        handBound: 3 * rtt.postgres + TICK_MS,
        handText: '1 round trip (NOTIFY)',
      },
      'ours-etcd': {
        subject: 'nestjs-leader-election (etcd)',
        crashBound: DEFAULTS.leaseMs + DEFAULTS.retryMs * (1 + JITTER) + TICK_MS,
        crashText: 'lease + retry (watch: ≈ lease + 0.5 s)',
        handBound: 3 * rtt.etcd + TICK_MS,
        handText: '1 round trip (watch)',
      },
      nle: {
        subject: 'nest-leader-election 1.1.2 (PostgreSQL)',
        // From its code: SQL lease fixed at 15 s; a dead holder's row is deleted only by a cleanup job
        // (every 2 × leaseDuration ± jitter/2) once expired for 5 s; then the next poll takes it.
        crashBound:
          15_000 + 5_000 + 2 * DEFAULTS.leaseMs + DEFAULTS.retryMs * JITTER + DEFAULTS.retryMs * (1 + JITTER) + TICK_MS,
        crashText: 'its code: 15 s + 5 s + cleanup period 2×lease + poll',
        handBound: DEFAULTS.retryMs * (1 + JITTER) + TICK_MS,
        handText: 'its poll interval (no push)',
      },
      etcd3: {
        subject: 'etcd3 1.1.2 Election (etcd)',
        // etcd revokes expired leases in a 500 ms loop; its watch then wakes the next candidate.
        crashBound: DEFAULTS.leaseMs + 500 + rtt.etcd + TICK_MS,
        crashText: 'TTL + 0.5 s (etcd expiry loop) + 1 round trip',
        handBound: 3 * rtt.etcd + TICK_MS,
        handText: '1 round trip (watch)',
      },
    };
    const settings4 = `same for all: lease/TTL ${seconds(DEFAULTS.leaseMs)}, poll/retry ${seconds(DEFAULTS.retryMs)} ±15 %`;
    for (const s of side) {
      const info = sideInfo[s.name];
      const crash = collect(`4:crash:${s.name}`);
      const handover = collect(`4:handover:${s.name}`);
      const pause = collect(`4:pause:${s.name}`);
      rows.push(
        failRow(
          rowFrom(
            4,
            'kill -9 → next leader acting',
            info.subject,
            settings4,
            'ms',
            summarize(crash.samples),
            info.crashBound,
            info.crashText,
          ),
          crash.failures,
        ),
      );
      rows.push(
        failRow(
          rowFrom(
            4,
            'SIGTERM → next leader acting',
            info.subject,
            settings4,
            'ms',
            summarize(handover.samples),
            info.handBound,
            info.handText,
          ),
          handover.failures,
        ),
      );
      const trials = pause.trials;
      const took = trials.filter((t) => t.takeover !== null);
      rows.push(
        failRow(
          {
            ...rowFrom(
              4,
              'SIGSTOP (> lease): another leader acting after',
              info.subject,
              settings4,
              'ms',
              summarize(took.map((t) => t.takeover)),
              info.crashBound,
              info.crashText,
            ),
            note:
              took.length < trials.length
                ? `${trials.length - took.length} of ${trials.length} trials: no takeover within ${s.capMs / 1000} s`
                : undefined,
          },
          pause.failures,
        ),
      );
      rows.push(
        rowFrom(
          4,
          'SIGCONT: still believes it leads, for',
          info.subject,
          'after another took over; isLeader()/amILeader() polled every 20 ms',
          'ms',
          summarize(took.map((t) => t.staleMs)),
          0,
          'deadline-checked: 0',
        ),
      );
      rows.push({
        ...rowFrom(
          4,
          'SIGCONT: leader-only runs while another leads',
          info.subject,
          `job every ${TICK_MS} ms`,
          'runs',
          summarize(took.map((t) => t.acts)),
          0,
          '0',
        ),
        note: `${took.filter((t) => t.acts > 0).length} of ${took.length} resumed processes acted at least once`,
      });
    }

    // Figure 5 rows.
    for (const store of STORES) {
      const r = callsResult?.stores?.[store];
      if (!r || r.error) {
        errors.push(`figure 5 ${store}: ${r?.error ?? 'no result'}`);
        continue;
      }
      const perHour = (count) => (count * 3_600_000) / r.elapsedMs;
      const total = (calls) => Object.values(calls).reduce((a, b) => a + b, 0) - (calls.watch ?? 0);
      const settings = `defaults (${settingsText(DEFAULTS)}); ${seconds(r.elapsedMs)} window`;
      for (const role of ['leader', 'follower']) {
        const calls = r[role].calls;
        const theoretical = role === 'leader' ? 3_600_000 / DEFAULTS.renewMs : 3_600_000 / DEFAULTS.retryMs;
        rows.push({
          figure: 5,
          metric: 'store calls per instance-hour',
          subject: `ours/${store} ${role}`,
          settings,
          unit: 'calls/h',
          n: 1,
          median: perHour(total(calls)),
          p95: null,
          max: null,
          bound: theoretical,
          boundText: role === 'leader' ? '3600 s / renew interval' : '3600 s / retry interval',
          detail: calls,
        });
        if (r[role].http) {
          const ops = Object.values(r[role].http).reduce((a, b) => a + b, 0);
          const other = Object.entries(r[role].http)
            .filter(([op]) => op.startsWith('lease:') || op === 'metadata' || op === 'read:HEAD')
            .reduce((a, [, v]) => a + v, 0);
          const monthly = (perHour(other) * HOURS_PER_MONTH * AZURE_OTHER_PER_10K) / 10_000;
          rows.push({
            figure: 5,
            metric: 'Azure requests per instance-hour',
            subject: `ours/azure ${role} (HTTP, billed)`,
            settings: `${Object.entries(r[role].http)
              .map(([op, v]) => `${op} ${v}`)
              .join(', ')} in ${seconds(r.elapsedMs)}`,
            unit: 'req/h',
            n: 1,
            median: perHour(ops),
            p95: null,
            max: null,
            bound: null,
            boundText: '—',
          });
          rows.push({
            figure: 5,
            metric: 'Azure cost per instance-month',
            subject: `ours/azure ${role}`,
            settings: `${Math.round(perHour(other))} "other" ops/h × ${HOURS_PER_MONTH} h × $${AZURE_OTHER_PER_10K}/10k`,
            unit: 'USD',
            n: 1,
            median: monthly,
            p95: null,
            max: null,
            bound: null,
            boundText: '—',
            digits: 2,
          });
        }
      }
      rows.push({
        figure: 5,
        metric: 'store round trip (read)',
        subject: `ours/${store}`,
        settings: 'loopback; used for the push bounds above',
        unit: 'ms',
        ...summarize(r.rttMs),
        bound: null,
        boundText: '—',
        digits: 2,
      });
    }

    // ---- phase C: contention, one store at a time --------------------------------------------
    for (const store of STORES) {
      log(`figure 6: contention on ${store}…`);
      const t = fig3Timings(store);
      await attempt(errors, `figure 6 ${store}`, async () => {
        const c = await contention(store, t, { runMs: quick ? 5_000 : 10_000, log });
        const settings = `${c.electors} electors in ${c.processes} processes; ${settingsText(t)}; leader resigns every 2.5 s`;
        rows.push({
          figure: 6,
          metric: 'time to the first leader',
          subject: `ours/${store}`,
          settings,
          unit: 'ms',
          n: 1,
          median: c.firstLeaderMs,
          p95: null,
          max: null,
          bound: rtt[store],
          boundText: '1 round trip',
        });
        rows.push({
          figure: 6,
          metric: 'most leaders at once',
          subject: `ours/${store}`,
          settings: `${c.terms} terms in ${seconds(c.runMs)}`,
          unit: 'leaders',
          n: c.terms,
          median: c.maxSimultaneous,
          p95: null,
          max: c.maxSimultaneous,
          bound: 1,
          boundText: 'must be 1',
        });
        const theoretical = (c.electors - 1) * (1000 / t.retryMs) + 1000 / t.renewMs;
        rows.push({
          figure: 6,
          metric: 'store calls per second (all electors)',
          subject: `ours/${store}`,
          settings: `${c.calls} calls in ${seconds(c.runMs)}`,
          unit: 'calls/s',
          n: 1,
          median: c.callsPerSecond,
          p95: null,
          max: null,
          bound: theoretical,
          boundText: '(n−1)/retry + 1/renew',
        });
      });
    }
  } finally {
    await stopServers();
  }

  // ---- output -----------------------------------------------------------------------------------
  const runtimeSec = (Date.now() - startedAt) / 1000;
  const output = {
    machine: { ...machine, loadAverageAtEnd: os.loadavg().map((v) => round(v, 2)) },
    node: process.version,
    date: new Date(startedAt).toISOString(),
    runtimeSec: round(runtimeSec),
    command: 'npm run bench',
    quick,
    tickMs: TICK_MS,
    timings: { fast: FAST, defaults: DEFAULTS },
    azurePrice: {
      otherOperationsPer10k: AZURE_OTHER_PER_10K,
      currency: 'USD',
      hoursPerMonth: HOURS_PER_MONTH,
      source: AZURE_PRICE_SOURCE,
    },
    figures: rows.map((r) => ({
      ...r,
      median: round(r.median, 3),
      p95: round(r.p95, 3),
      max: round(r.max, 3),
      bound: round(r.bound, 3),
      failures: r.failures?.length ? r.failures : undefined,
    })),
    errors,
  };
  const dir = join(root, 'bench/results');
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `latest.${randomBytes(3).toString('hex')}.tmp.json`);
  await writeFile(tmp, `${JSON.stringify(output, null, 2)}\n`);
  await rename(tmp, join(dir, 'latest.json'));
  formatJson(root, join(dir, 'latest.json'));
  await writeFile(join(dir, 'latest.md'), markdown(rows, output));
  console.log(`\n${table(rows)}`);
  console.log(
    `\nMachine: ${machine.cpuModel} ×${machine.cpus}, ${machine.memoryGiB} GiB, ${machine.os}; Node ${process.version}; ${output.date}`,
  );
  console.log(`Azure price: $${AZURE_OTHER_PER_10K} per 10,000 "other" operations — ${AZURE_PRICE_SOURCE}`);
  if (errors.length) console.log(`\nErrors:\n${errors.map((e) => `  - ${e}`).join('\n')}`);
  console.log(`\nWrote bench/results/latest.json in ${runtimeSec.toFixed(0)} s.`);
  return 0;
}

const FIGURE_TITLES = {
  1: 'Decorator overhead: ns per call, in a Nest application context (tinybench)',
  2: 'Guard overhead: requests/s of the same app, guarded vs unguarded route (autocannon)',
  3: 'Failover and handover per store: real processes, a leader-only job every 20 ms counts as "acting"',
  4: 'Side by side: same run, same lease settings',
  5: 'Store calls per instance-hour (counted at the LeaseStore boundary) and Azure cost',
  6: 'Contention: 50 electors on one lease',
};

/** The README's "Performance" tables, one per figure. */
function markdown(rows, output) {
  const m = output.machine;
  const lines = [
    `Measured with \`npm run bench\` on ${m.cpuModel} ×${m.cpus}, ${m.memoryGiB} GiB, ${m.os}, Node ${output.node}, ` +
      `${output.date.slice(0, 10)} (run took ${Math.round(output.runtimeSec / 60)} min; load average ${m.loadAverageAtStart.join(' / ')} at start). ` +
      'Medians of n trials; every figure with p95 and max is in `bench/results/latest.json`.',
    '',
  ];
  for (const figure of [1, 2, 3, 4, 5, 6]) {
    const group = rows.filter((r) => r.figure === figure);
    if (!group.length) continue;
    lines.push(`**${figure}. ${FIGURE_TITLES[figure]}**`, '');
    lines.push(
      '| subject | measure | n | median | p95 | max | bound | settings |',
      '|---|---|--:|--:|--:|--:|---|---|',
    );
    for (const r of group) {
      const unit = r.unit === '×' ? '×' : ` ${r.unit}`;
      const cell = (v) => (v === null || v === undefined ? '—' : `${format(v, r.digits)}${unit}`);
      const bound = r.bound === null || r.bound === undefined ? r.boundText : `${cell(r.bound)} (${r.boundText})`;
      const notes = [r.settings, r.note, r.failures?.length ? `${r.failures.length} failed trials` : undefined];
      lines.push(
        `| ${r.subject} | ${r.metric} | ${r.n ?? '—'} | ${cell(r.median)} | ${cell(r.p95)} | ${cell(r.max)} | ${bound} | ${notes.filter(Boolean).join('; ')} |`,
      );
    }
    lines.push('');
  }
  lines.push(
    `Azure price used: $${output.azurePrice.otherOperationsPer10k} per 10,000 "other" operations (${output.azurePrice.source}).`,
    '',
  );
  return lines.join('\n');
}

/** The repo's formatter (biome) lays the file out as it would, so `biome check` stays clean. Best effort. */
function formatJson(root, file) {
  const biome = join(root, 'node_modules/@biomejs/biome/bin/biome');
  if (!existsSync(biome)) return;
  spawnSync(process.execPath, [biome, 'format', '--write', file], { cwd: root, stdio: 'ignore' });
}

function rowFrom(figure, metric, subject, settings, unit, stats, bound, boundText) {
  return {
    figure,
    metric,
    subject,
    settings,
    unit,
    n: stats.n,
    median: stats.median,
    p95: stats.p95,
    max: stats.max,
    bound,
    boundText,
  };
}

function failRow(row, failures) {
  return failures.length ? { ...row, failures } : row;
}

/** Whether something accepts TCP connections at the URL's host and port. */
function reachable(url) {
  const { hostname, port } = new URL(url);
  const defaults = { 'postgres:': 5432, 'mysql:': 3306, 'redis:': 6379 };
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) || defaults[new URL(url).protocol] });
    socket.setTimeout(2_000);
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

async function attempt(errors, label, fn) {
  try {
    await fn();
  } catch (error) {
    errors.push(`${label}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Runs `worker(job)` for every job, at most `limit` at once, in the given order. */
async function pool(jobs, limit, worker) {
  const queue = [...jobs];
  await Promise.all(
    Array.from({ length: Math.min(limit, queue.length) }, async () => {
      while (queue.length) await worker(queue.shift());
    }),
  );
}

/** Fresh schemas for the peer's parallel chains: its cleanup job deletes every expired row of its table. */
async function prepareNleSchemas(count) {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const names = Array.from({ length: count }, (_, i) => `bench_nle_${i}`);
    for (const name of names) {
      await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await client.query(`CREATE SCHEMA ${name}`);
    }
    return names;
  } finally {
    await client.end();
  }
}

function machineInfo() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model?.trim() ?? 'unknown',
    cpus: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((v) => round(v, 2)),
  };
}

function format(value, digits) {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  const d = digits ?? (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
  return value.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

function table(rows) {
  const header = ['fig', 'figure', 'subject', 'n', 'median', 'p95', 'max', 'unit', 'bound', 'settings / notes'];
  const lines = rows.map((r) => [
    String(r.figure),
    r.metric,
    r.subject,
    String(r.n ?? '—'),
    format(r.median, r.digits),
    format(r.p95, r.digits),
    format(r.max, r.digits),
    r.unit,
    r.bound === null || r.bound === undefined ? r.boundText : `${format(r.bound, r.digits)} (${r.boundText})`,
    [r.settings, r.note, r.failures?.length ? `${r.failures.length} failed: ${r.failures[0]}` : undefined]
      .filter(Boolean)
      .join('; '),
  ]);
  const widths = header.map((h, i) =>
    Math.min(i === 9 ? 200 : 60, Math.max(h.length, ...lines.map((l) => l[i].length))),
  );
  const fmt = (cells) =>
    cells
      .map((c, i) => {
        const text = c.length > widths[i] ? `${c.slice(0, widths[i] - 1)}…` : c;
        return [3, 4, 5, 6].includes(i) ? text.padStart(widths[i]) : text.padEnd(widths[i]);
      })
      .join('  ')
      .trimEnd();
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}
