#!/usr/bin/env node
// @ts-check
// `npm run bench`: every benchmark figure of docs/design/performance.md, side by side with the
// alternatives, printed as one table and written to bench/results/latest.json. No pass/fail:
// each figure is shown next to its theoretical bound. How to reproduce each figure: bench/README.md.
//
//   node bench/run.mjs [--quick]          (--quick: 2 trials per figure, shorter windows; for a smoke run)
//
// It installs bench/'s own dependencies when missing (`npm ci --prefix bench`), makes sure the
// machine's PostgreSQL / MariaDB / Redis are up and etcd is installed (scripts/ensure-services.sh),
// and starts Azurite and etcd on free ports (the tests' own test/setup helpers). TypeScript (the
// library, the bench apps) is compiled by swc with the tests' options, so it measures lib/ as it is:
// through the tests' loader here, and once per run for the apps it spawns (lib/precompile.mjs).
//
// Figures (see each module):
//   1 decorator overhead  bench/figures/overhead.mjs  + apps/decorator-bench.mjs, apps/overhead-app.ts
//   2 guard overhead      bench/figures/overhead.mjs  + apps/http-app.ts
//   3 failover per store  bench/figures/failover.mjs  + apps/replica.ts
//   4 side by side        bench/figures/failover.mjs  + apps/peer-nle.mjs, apps/peer-etcd3.mjs
//   5 calls per hour      apps/calls.ts
//   6 contention          bench/figures/contention.mjs + apps/contender.ts
//   8 fleet projection    bench/lib/rows/fleet.mjs (from figure 5's counts, 1 and 20 elections)
//   9 fleet contention    bench/figures/contention.mjs at 200 electors in 20 processes
//  10 time to balance     bench/figures/spread.mjs + apps/fleet-replica.ts (N × E, cold start)
//  11 handover on request bench/figures/spread.mjs + apps/fleet-replica.ts (directed, asked by a third)
//  12 no flapping         bench/figures/spread.mjs (a balanced 3 × 3 watched; exit code 1 if it moved)
//  13 handover call cost  apps/handover-calls.ts (capability on vs hidden, and per handover)
//  14 import cost         bench/import-cost.mjs (cold import of each entry over @nestjs/core, Azure SDK loaded?)
//  15 metrics overhead   bench/metrics-overhead.mjs (per @LeaderOnly call and renewal: no API, API only, SDK)
//  16 store traffic      bench/figures/store-traffic.mjs + lib/traffic/ (calls per replica-hour by role and feature,
//                        store object and wire, and the 1,000 × 20 fleet; also `node bench/figures/store-traffic.mjs`)
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBenchDeps } from '../scripts/lib/bench-deps.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const startedAt = Date.now();

// ---- bench/'s own dependencies -------------------------------------------------------------------
if (!ensureBenchDeps('bench')) process.exit(1);

// ---- servers --------------------------------------------------------------------------------------
const ensure = spawnSync('bash', [join(root, 'scripts/ensure-services.sh')], { cwd: root, stdio: 'inherit' });
if (ensure.status !== 0)
  console.warn('bench: scripts/ensure-services.sh failed; figures of missing servers will show errors');

// TypeScript from here on (the tests' swc loader), then everything that needs bench/node_modules.
await import('../test/support/swc-register.mjs');
const { main } = await import('./lib/main.mjs');
const code = await main({ root, startedAt, quick: process.argv.includes('--quick') });
process.exit(code);
