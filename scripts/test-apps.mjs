#!/usr/bin/env node
// @ts-check
// `npm run test:apps`: the packed package in Nest apps shaped the way users create them.
//
//   node scripts/test-apps.mjs [--without-kit] [--only <app id>]
//
// `npm pack` (its `prepack` builds both dialects) makes the tarball; each app under test/apps
// installs its own lockfile (`npm ci`) plus the tarball, compiles with its own tsc / `nest build`,
// runs its own unit tests, then boots two replicas on PostgreSQL (127.0.0.1:5432, db test, a
// table of its own per run) and checks that exactly one of them runs the `@Cron @LeaderOnly` job,
// that the follower's `@LeaderOnly` route answers 503 with Retry-After and X-Leader-Id naming the
// leader, and that both exit by themselves on SIGTERM. `--without-kit` leaves out the specs that
// need `@leaderlease/nestjs/testing`'s kit. Exit code: 0 when every app passed.
//
// Every child runs on the Node that runs this script: its directory comes first in the children's
// PATH (npm, nest, tsc, jest and vitest start with `#!/usr/bin/env node`) and the replicas are
// spawned with process.execPath, so `/path/to/node22/bin/node scripts/test-apps.mjs --only <id>`
// tests that app on Node 22 throughout (`npm run test:nodes`, scripts/other-nodes.mjs).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ChildGroup, exitOf, SIGTERM_WHEN_PARENT_GONE, spawnNode } from './lib/child-process.mjs';
import { freePort } from './lib/ports.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const appsDir = join(root, 'test/apps');
const DATABASE_URL = process.env.APPS_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The children's PATH: this script's own Node first (see above). */
const PATH = [dirname(process.execPath), process.env.PATH].filter(Boolean).join(delimiter);
const { values: flags } = parseArgs({
  options: { 'without-kit': { type: 'boolean', default: false }, only: { type: 'string' } },
});
const KIT_SPEC = 'jobs.service.spec';
/** Every replica started; SIGKILLed should this runner exit with one still running. */
const live = new ChildGroup();
/** The Nest 12 app's own spec: the testing guide's complete Vitest test, printed there verbatim. It uses the kit too. */
const VITEST_GUIDE_SPEC = 'billing.jobs.spec';

/**
 * @typedef {object} App
 * @property {string} id
 * @property {string} title
 * @property {string} dir the directory under test/apps holding its install
 * @property {string} [srcFrom] the app whose src/ is copied in as ESM
 * @property {string[]} [build]
 * @property {string[]} [test]
 * @property {string} main the entry point, relative to `dir`
 */

/**
 * @typedef {object} Replica
 * @property {string} identity
 * @property {number} port
 * @property {import('node:child_process').ChildProcess} child
 * @property {string[]} lines its stdout and stderr, line by line
 * @property {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} exited
 * @property {(path: string) => string} url
 */

/** @typedef {{ identity: string, leader: boolean, ticks: number }} Status what an app's GET /status answers */

/**
 * @param {string} dir
 * @param {string} name
 */
const bin = (dir, name) => join(appsDir, dir, 'node_modules/.bin', name);
/** @type {App[]} The apps. One install per directory; a variant reuses its directory's install. */
const apps = [
  {
    id: 'nest11-starter',
    title: 'Nest 11 starter: CommonJS, TypeScript 5.7 module nodenext, Jest 29 + ts-jest, Express',
    dir: 'nest11-starter',
    build: [bin('nest11-starter', 'nest'), 'build'],
    test: [bin('nest11-starter', 'jest'), ...(flags['without-kit'] ? ['--testPathIgnorePatterns', KIT_SPEC] : [])],
    main: 'dist/main.js',
  },
  {
    id: 'nest11-commonjs',
    title: 'Nest 11 starter with the Nest 10 tsconfig: module commonjs (node10 resolution), Jest + ts-jest',
    dir: 'nest11-starter',
    build: [bin('nest11-starter', 'tsc'), '-p', 'tsconfig.commonjs.json'],
    test: [
      bin('nest11-starter', 'jest'),
      '--config',
      'jest.commonjs.json',
      ...(flags['without-kit'] ? ['--testPathIgnorePatterns', KIT_SPEC] : []),
    ],
    main: 'dist/node10/main.js',
  },
  {
    id: 'nest12-esm',
    title: 'Nest 12 `nest new`: ESM, TypeScript 6, Vitest 4, Express',
    dir: 'nest12-esm',
    // Its entry points are its own; the application code is the Nest 11 starter's, as ESM.
    srcFrom: 'nest11-starter',
    build: [bin('nest12-esm', 'nest'), 'build'],
    test: [
      bin('nest12-esm', 'vitest'),
      'run',
      ...(flags['without-kit'] ? ['--exclude', `**/${KIT_SPEC}.ts`, '--exclude', `**/${VITEST_GUIDE_SPEC}.ts`] : []),
    ],
    main: 'dist/main.js',
  },
  {
    id: 'nest12-fastify',
    title: 'The Nest 12 app on the Fastify adapter',
    dir: 'nest12-esm',
    srcFrom: 'nest11-starter',
    build: [bin('nest12-esm', 'nest'), 'build'],
    main: 'dist/main-fastify.js',
  },
].filter((app) => !flags.only || app.id === flags.only);

/**
 * @param {string[]} argv
 * @param {string} cwd
 * @param {string} label
 */
function run(argv, cwd, label) {
  console.log(`\n[${label}] $ ${argv.map((a) => a.replace(root, '.')).join(' ')}`);
  const result = spawnSync(argv[0], argv.slice(1), {
    cwd,
    stdio: 'inherit',
    env: { ...process.env, PATH, CI: 'true' },
  });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`[${label}] ${argv[0].replace(root, '.')} exited with ${result.status}`);
}

/** The `node` the children find on PATH is this script's: a tool on another Node would test that one. */
function checkChildrenNode() {
  const found = spawnSync('node', ['-p', 'process.version'], { env: { ...process.env, PATH }, encoding: 'utf8' });
  if (found.stdout?.trim() !== process.version) {
    throw new Error(`node on the children's PATH is ${found.stdout?.trim() || found.error}, not ${process.version}`);
  }
  console.log(`test-apps: Node ${process.version} (${process.execPath}) runs the tools and the replicas`);
}

/**
 * Copies the application code (not main.ts), adding `.js` to relative imports as ESM requires.
 * @param {string} from
 * @param {string} to
 */
function copyAsEsm(from, to) {
  for (const file of readdirSync(from)) {
    if (file === 'main.ts' || !file.endsWith('.ts')) continue;
    const source = readFileSync(join(from, file), 'utf8');
    writeFileSync(join(to, file), source.replace(/from '(\.\.?\/[^']+?)'/g, "from '$1.js'"));
  }
}

function packTarball() {
  const out = mkdtempSync(join(tmpdir(), 'nle-pack-'));
  run(['npm', 'pack', '--pack-destination', out, '--silent'], root, 'pack');
  const tarball = readdirSync(out).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error('npm pack wrote no tarball');
  return join(out, tarball);
}

/**
 * @param {App} app
 * @param {string} replica
 * @param {string} table
 * @returns {Promise<Replica>}
 */
async function startReplica(app, replica, table) {
  const port = await freePort();
  const identity = `${app.id}-${replica}`;
  // Stdin piped and watched: a runner killed outright (SIGKILL) leaves no replica behind.
  const child = live.add(
    spawnNode(['--import', SIGTERM_WHEN_PARENT_GONE, app.main], {
      cwd: join(appsDir, app.dir),
      env: { PATH, NO_COLOR: '1', PORT: String(port), REPLICA_ID: identity, LEASE_TABLE: table, DATABASE_URL },
    }),
  );
  /** @type {string[]} */
  const lines = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk) => lines.push(...chunk.split('\n').filter(Boolean)));
  }
  /** @type {Replica['exited']} */
  const exited = exitOf(child);
  return {
    identity,
    port,
    child,
    lines,
    exited,
    url: /** @param {string} path */ (path) => `http://127.0.0.1:${port}${path}`,
  };
}

/**
 * @param {Replica} replica
 * @returns {Promise<Status>}
 */
async function status(replica) {
  const response = await fetch(replica.url('/status'));
  if (!response.ok) throw new Error(`${replica.identity} /status answered ${response.status}`);
  return /** @type {Promise<Status>} */ (response.json());
}

/**
 * @template T
 * @param {string} what
 * @param {() => Promise<T>} check
 * @param {number} timeoutMs
 * @returns {Promise<T>}
 */
async function until(what, check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/**
 * @param {unknown} condition
 * @param {string} message
 * @param {Replica[]} replicas
 */
function expect(condition, message, replicas) {
  if (condition) return;
  for (const r of replicas) console.error(`--- ${r.identity} output:\n${r.lines.slice(-40).join('\n')}`);
  throw new Error(message);
}

/** @param {App} app */
async function twoReplicas(app) {
  const table = `apps_matrix_${app.id.replaceAll('-', '_')}_${process.pid}_${Date.now()}`;
  const replicas = [await startReplica(app, 'a', table), await startReplica(app, 'b', table)];
  let failure;
  try {
    await checkReplicas(app, replicas);
  } catch (error) {
    failure = error;
  }
  for (const r of replicas) r.child.kill('SIGTERM');
  // Unref'd: once both replicas are gone, the pending timeout must not hold this process open for 20 s.
  const timeout = sleep(20_000, null, { ref: false });
  const exits = await Promise.race([Promise.all(replicas.map((r) => r.exited)), timeout]);
  if (!exits) for (const r of replicas) r.child.kill('SIGKILL');
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query(`DROP TABLE IF EXISTS ${table}`);
  await client.end();
  if (failure) throw failure;
  if (!exits) throw new Error(`[${app.id}] a replica did not exit within 20 s of SIGTERM`);
}

/**
 * Both replicas answer; exactly one runs the job; the follower's route refuses with the headers.
 * @param {App} app
 * @param {Replica[]} replicas
 */
async function checkReplicas(app, replicas) {
  for (const r of replicas) {
    const early = r.exited.then(({ code, signal }) => {
      throw new Error(`${r.identity} exited early (code ${code}, signal ${signal})`);
    });
    await Promise.race([until(`${r.identity} to answer`, () => status(r), 30_000), early]);
  }
  await until(
    'a leader that has ticked twice',
    async () => (await Promise.all(replicas.map(status))).some((s) => s.leader && s.ticks >= 2),
    20_000,
  );
  await sleep(2_500); // several more cron ticks: the follower must still not have run one
  const states = await Promise.all(replicas.map(status));
  const leaders = states.filter((s) => s.leader);
  expect(leaders.length === 1, `expected exactly one leader, got ${JSON.stringify(states)}`, replicas);
  const leader = replicas[states.indexOf(leaders[0])];
  // Two replicas, exactly one of them the leader: the other one is there.
  const follower = /** @type {Replica} */ (replicas.find((r) => r !== leader));
  const followerState = states[replicas.indexOf(follower)];
  expect(leaders[0].ticks >= 3, `the leader ticked only ${leaders[0].ticks} times`, replicas);
  expect(followerState.ticks === 0, `the follower ran the leader-only job ${followerState.ticks} times`, replicas);
  expect(!follower.lines.some((l) => /\btick \d+/.test(l)), 'the follower logged a tick', replicas);
  expect(
    leader.lines.some((l) => /\btick \d+/.test(l)),
    'the leader logged no tick',
    replicas,
  );

  const refused = await fetch(follower.url('/admin/reindex'), { method: 'POST' });
  const body = /** @type {{ leaderId?: string }} */ (await refused.json());
  expect(refused.status === 503, `follower's @LeaderOnly route answered ${refused.status}`, replicas);
  expect(/^\d+$/.test(refused.headers.get('retry-after') ?? ''), 'no numeric Retry-After on the 503', replicas);
  expect(
    refused.headers.get('x-leader-id') === leader.identity,
    `X-Leader-Id is ${refused.headers.get('x-leader-id')}, not ${leader.identity}`,
    replicas,
  );
  expect(body.leaderId === leader.identity, `503 body names ${body.leaderId}`, replicas);
  const accepted = await fetch(leader.url('/admin/reindex'), { method: 'POST' });
  expect(accepted.status === 201, `leader's @LeaderOnly route answered ${accepted.status}`, replicas);
  console.log(
    `[${app.id}] leader ${leader.identity} ticked ${leaders[0].ticks}×, follower 0×; follower 503 + Retry-After ${refused.headers.get('retry-after')} + X-Leader-Id ok`,
  );
}

/**
 * The testing guide's Vitest example (docs/guides/testing.md) is the file the Nest 12 app runs,
 * character for character. The guide fences it ```ts fragment: the docs checker cannot compile it
 * (the repository installs no vitest), this app does.
 */
function checkGuideVitestExample() {
  const spec = readFileSync(join(appsDir, 'nest12-esm/src', `${VITEST_GUIDE_SPEC}.ts`), 'utf8');
  const guide = readFileSync(join(root, 'docs/guides/testing.md'), 'utf8');
  const printed = [...guide.matchAll(/```ts(?: fragment)?\n([\s\S]*?)```/g)].map((m) => m[1]);
  if (!printed.includes(spec)) {
    throw new Error(
      `docs/guides/testing.md does not print test/apps/nest12-esm/src/${VITEST_GUIDE_SPEC}.ts verbatim (Vitest section)`,
    );
  }
}

const started = Date.now();
checkChildrenNode();
const tarball = packTarball();
/** @type {Set<string>} */
const installed = new Set();
/** @type {string[]} */
const results = [];
try {
  for (const app of apps) {
    const cwd = join(appsDir, app.dir);
    const t0 = Date.now();
    if (!installed.has(app.dir)) {
      run(['npm', 'ci', '--no-audit', '--no-fund', '--loglevel=error'], cwd, app.id);
      run(['npm', 'install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', tarball], cwd, app.id);
      installed.add(app.dir);
    }
    if (app.srcFrom) copyAsEsm(join(appsDir, app.srcFrom, 'src'), join(cwd, 'src'));
    if (app.id === 'nest12-esm') checkGuideVitestExample();
    if (app.build) run(app.build, cwd, app.id);
    if (app.id === 'nest11-starter') run([process.execPath, 'dual-package.mjs'], cwd, app.id);
    if (app.test) run(app.test, cwd, app.id);
    await twoReplicas(app);
    results.push(`${app.id}: passed in ${((Date.now() - t0) / 1000).toFixed(0)} s — ${app.title}`);
  }
} finally {
  rmSync(dirname(tarball), { recursive: true, force: true });
}
console.log(
  `\ntest-apps: all ${results.length} apps passed in ${((Date.now() - started) / 1000).toFixed(0)} s on Node ${process.version}\n${results.join('\n')}`,
);
