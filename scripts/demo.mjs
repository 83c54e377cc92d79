#!/usr/bin/env node
// The demo behind `npm start`: an Azurite blob service in memory (unless you bring a storage
// account), then N sample-app instances that elect a leader through one lease blob. It reads the
// instances' JSON log lines and prints one line per event that matters: elections, terms, which
// instance ran the cron job, revocations and takeovers.
//
//   npm start                      3 instances on ports 3001–3003; Ctrl+C stops everything
//   npm start -- --tour            kill -9 the leader, then SIGTERM the next; print the timings; exit
//   node scripts/demo.mjs --help   all options (expects a build: `npm run build` + the sample app)
//
// Children are never detached and are stopped in order on exit: instances first (they release
// their lease), Azurite last. Should this script die without cleaning up (even by SIGKILL), every
// child sees its stdin close and stops itself, so no process is left behind.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const APP_MAIN = join(ROOT, 'sample-app/dist/main.js');
const LIB_MAIN = join(ROOT, 'dist/esm/index.js');

// Azurite's fixed, publicly documented development account: not a secret, but still never printed.
const AZURITE_ACCOUNT = 'devstoreaccount1';
const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

// The library's defaults, which the sample app keeps; only used to tell the user what to expect.
const LEASE_S = 15;
const RETRY_S = 2;
// A crash: the lease expires 15 s after its last renewal (0–2.5 s before the crash), then a
// follower wins at its next poll (every 2 s ± 15 %). A graceful stop releases: the next poll wins.
const CRASH_EXPECTED = '~13–17 s';
const GRACEFUL_EXPECTED = '0–2.3 s';

const INSTANCE_STOP_TIMEOUT_MS = 20_000; // shutdownTimeout (10 s) + release, with room to spare
const AZURITE_STOP_TIMEOUT_MS = 5_000;

const USAGE = `Usage: node scripts/demo.mjs [options]        (npm start -- [options] builds first)

  --tour            kill -9 the leader, then SIGTERM its successor; print the measured
                    failover and handover times, then stop everything and exit
  --instances <n>   how many sample-app instances (default 3; --tour needs at least 3)
  --port <port>     port of the first instance; the others follow (default 3001)
  --verbose         also print every log line of the instances
  --help            this text

Environment: AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT_URL to use a real
storage account instead of the embedded Azurite; ELECTION to name the lease (default sample-app-demo).`;

// ---- options -----------------------------------------------------------------------------------

let args;
try {
  args = parseArgs({
    options: {
      tour: { type: 'boolean', default: false },
      instances: { type: 'string', default: '3' },
      port: { type: 'string', default: '3001' },
      verbose: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  }).values;
} catch (error) {
  console.error(`${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
const instanceCount = Number(args.instances);
const basePort = Number(args.port);
if (!Number.isInteger(instanceCount) || instanceCount < 1 || instanceCount > 9) fail('--instances must be 1 to 9');
if (!Number.isInteger(basePort) || basePort < 1 || basePort + instanceCount - 1 > 65_535)
  fail('--port must be a valid port');
if (args.tour && instanceCount < 3)
  fail('--tour needs at least 3 instances (one to crash, one to stop, one to take over)');
for (const [file, hint] of [
  [LIB_MAIN, 'npm run build'],
  [APP_MAIN, 'npx tsc -p sample-app/tsconfig.json'],
]) {
  if (!existsSync(file)) fail(`${file} is missing: run \`npm start\` (it builds first) or \`${hint}\``);
}

// ---- output ------------------------------------------------------------------------------------

const useColor = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const paint = (code) => (text) => (useColor ? `\x1b[${code}m${text}\x1b[0m` : String(text));
const style = {
  dim: paint('2'),
  bold: paint('1'),
  red: paint('31'),
  yellow: paint('33'),
  leader: paint('1;32'),
};
const INSTANCE_COLORS = ['36', '35', '33', '34', '96', '95', '93', '94', '37'].map(paint);
const SOURCE_WIDTH = 11;

// A closed pipe (`npm start | head`) must not crash the demo and leave children behind.
process.stdout.on('error', () => undefined);

function timestamp() {
  const now = new Date();
  const pad = (n, width = 2) => String(n).padStart(width, '0');
  return `${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}.${Math.floor(now.getMilliseconds() / 100)}`;
}

/** One line: time, who (coloured per instance), what. */
function say(source, text, colorize = (s) => s) {
  console.log(`${style.dim(timestamp())} ${colorize(source.padEnd(SOURCE_WIDTH))} ${text}`);
}

function fail(message) {
  console.error(`demo: ${message}`);
  process.exit(1);
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

// ---- processes ---------------------------------------------------------------------------------

/** Every child we started; the exit handler kills whatever is still alive in it. */
const children = new Set();
const isAlive = (child) => child.exitCode === null && child.signalCode === null;

function track(child) {
  children.add(child);
  child.exited = new Promise((resolve) => child.once('exit', resolve));
  void child.exited.then(() => children.delete(child));
  return child;
}

// Last resort when this script dies without stopping its children in order (an uncaught error,
// process.exit elsewhere). A SIGKILL of this script skips it, but then the children's stdin closes.
process.on('exit', () => {
  for (const child of children) if (isAlive(child)) child.kill('SIGKILL');
});

/** Preloaded into each instance: a closed stdin means the demo is gone, so shut down gracefully. */
const INSTANCE_GUARD = `data:text/javascript,${encodeURIComponent(
  [
    "const stop = () => process.kill(process.pid, 'SIGTERM');",
    "process.stdin.on('end', stop);",
    "process.stdin.on('error', stop);",
    'process.stdin.resume();',
    'process.stdin.unref();', // watching stdin must not keep the process alive on its own
  ].join('\n'),
)}`;

// Runs Azurite's own CLI entry (as node_modules/.bin/azurite-blob does), with two changes:
// - Ctrl+C in a terminal signals the whole foreground process group, Azurite included. Azurite
//   must outlive the instances, which release their leases on the way out, so it ignores SIGINT
//   and this script stops it last, with SIGTERM.
// - It exits when its stdin (a pipe from this script) closes, i.e. when this script is gone.
// On SIGTERM Azurite closes its server; should an idle keep-alive socket hold that up, exit anyway.
const AZURITE_BOOTSTRAP = `
const [main, ...args] = process.argv.slice(1);
process.argv = [process.argv[0], main, ...args];
const once = process.once;
process.once = function (event, listener) { return event === 'SIGINT' ? this : once.call(this, event, listener); };
process.on('SIGINT', () => {});
process.on('SIGTERM', () => setTimeout(() => process.exit(0), 2000).unref());
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
process.stdin.unref();
require(main);
`;

async function startAzurite() {
  const require = createRequire(import.meta.url);
  const main = join(dirname(require.resolve('azurite/package.json')), 'dist/src/blob/main.js');
  const port = await freePort();
  const child = track(
    spawn(
      process.execPath,
      [
        '-e',
        AZURITE_BOOTSTRAP,
        main,
        '--blobHost',
        '127.0.0.1',
        '--blobPort',
        String(port),
        '--inMemoryPersistence',
        '--skipApiVersionCheck',
        '--disableTelemetry',
        '--silent',
        '--loose',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    ),
  );
  let output = '';
  const collect = (chunk) => (output = (output + chunk).slice(-4_000));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const deadline = Date.now() + 30_000;
  while (!(await canConnect(port))) {
    if (!isAlive(child)) throw new Error(`Azurite exited before listening on port ${port}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`Azurite did not listen on port ${port} within 30 s:\n${output}`);
    await sleep(100);
  }
  const endpoint = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`;
  return {
    child,
    endpoint,
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=${endpoint};`,
  };
}

async function stopChild(child, signal, timeoutMs) {
  if (!isAlive(child)) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await child.exited;
  clearTimeout(timer);
}

// ---- the instances and what they report --------------------------------------------------------

/** Instance events as they arrive: `{ instance, event, fields, at }`; the tour waits on them. */
const bus = new EventEmitter();
bus.setMaxListeners(0);

const instances = [];
const state = {
  /** The instance leading as far as we know, with its term. */
  leader: undefined,
  /** When and how the last leader went away: the start of the next failover. */
  lastLoss: undefined,
  introduced: false,
  stopping: false,
  azurite: undefined,
};

function startInstance(index, connection) {
  const name = `instance-${index + 1}`;
  const port = basePort + index;
  const child = track(
    spawn(process.execPath, ['--import', INSTANCE_GUARD, APP_MAIN], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        ...connection,
        PORT: String(port),
        INSTANCE_ID: name,
        ELECTION: process.env.ELECTION || 'sample-app-demo',
        LOG_FORMAT: 'json',
      },
    }),
  );
  const instance = { name, port, child, pid: child.pid, up: false, color: INSTANCE_COLORS[index], expectedExit: false };
  instances.push(instance);
  createInterface({ input: child.stdout }).on('line', (line) => onLogLine(instance, line));
  // stderr carries crashes and Node warnings: always worth showing, dimmed.
  createInterface({ input: child.stderr }).on('line', (line) => say(name, style.dim(line), instance.color));
  child.once('exit', (code, signal) => onExit(instance, code, signal));
  return instance;
}

function onLogLine(instance, line) {
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    say(instance.name, style.dim(line), instance.color);
    return;
  }
  const message = entry?.message;
  if (message && typeof message === 'object' && typeof message.event === 'string') {
    const { event, text: _text, ...fields } = message;
    onEvent(instance, event, fields);
    bus.emit('event', { instance, event, fields, at: Date.now() });
    if (args.verbose) say(instance.name, style.dim(message.text), instance.color);
  } else if (entry?.level === 'error' || entry?.level === 'fatal') {
    say(instance.name, style.red(`${entry.context ? `[${entry.context}] ` : ''}${text(message)}`), instance.color);
  } else if (entry?.level === 'warn') {
    say(instance.name, style.yellow(`${entry.context ? `[${entry.context}] ` : ''}${text(message)}`), instance.color);
  } else if (args.verbose) {
    say(instance.name, style.dim(`${entry?.context ? `[${entry.context}] ` : ''}${text(message)}`), instance.color);
  }
}

function text(message) {
  return typeof message === 'string' ? message : JSON.stringify(message);
}

function onEvent(instance, event, fields) {
  const out = (line) => say(instance.name, line, instance.color);
  switch (event) {
    case 'listening':
      instance.up = true;
      out(`up on http://localhost:${fields.port} (pid ${instance.pid})`);
      maybeIntroduce();
      break;
    case 'elected': {
      const loss = state.lastLoss;
      let takeover = '';
      if (loss && loss.from !== instance.name) {
        takeover = `, took over from ${loss.from} ${seconds(Date.now() - loss.at)} after it ${loss.how}`;
      }
      state.leader = { instance, term: fields.term };
      state.lastLoss = undefined;
      out(style.leader(`★ elected leader, term ${fields.term}${takeover}`));
      if (state.introduced && !args.tour) hint();
      break;
    }
    case 'revoked':
      if (state.leader?.instance === instance) {
        state.leader = undefined;
        const how =
          fields.reason === 'stopped'
            ? 'shut down'
            : fields.reason === 'resigned'
              ? 'resigned'
              : `lost it (${fields.reason})`;
        state.lastLoss = { from: instance.name, at: Date.now(), how };
      }
      out(style.yellow(`✗ no longer leader (term ${fields.term}): ${fields.reason}`));
      break;
    case 'leader-changed':
      // "No known leader" mostly comes from the leader itself as it stops: noise, unless asked for.
      if (fields.leaderId) out(style.dim(`follows ${fields.leaderId}`));
      else if (args.verbose) out(style.dim('sees no leader'));
      break;
    case 'job':
      out(
        fields.trigger === 'http'
          ? `⚙ POST /jobs/run-now ran: report #${fields.report}, fencing term ${fields.term}`
          : `⚙ cron job ran: report #${fields.report}, fencing term ${fields.term}`,
      );
      break;
    case 'job-aborted':
      out(style.yellow(`⚙ report #${fields.report} abandoned: term ${fields.term} ended mid-work`));
      break;
    case 'worker-started':
      out(style.dim(`queue worker started (term ${fields.term})`));
      break;
    case 'worker-stopped':
      out(style.dim(`queue worker stopped after ${fields.processed} items (term ${fields.term} ended)`));
      break;
    case 'stopped':
      out(`shut down cleanly${fields.signal ? ` on ${fields.signal}` : ''}`);
      break;
    default:
      if (args.verbose) out(style.dim(`${event} ${JSON.stringify(fields)}`));
  }
}

function onExit(instance, code, signal) {
  instance.up = false;
  // Nest re-raises the shutdown signal once its hooks ran, so a clean stop also ends "by signal".
  const how = signal === 'SIGKILL' ? 'killed (SIGKILL)' : signal ? `exited (${signal})` : `exited with code ${code}`;
  const crashed = !state.stopping && !instance.expectedExit;
  say(instance.name, (crashed ? style.red : style.dim)(`${how} (pid ${instance.pid})`), instance.color);
  if (state.leader?.instance === instance) {
    // Died while leading, without releasing: its lease blocks the others until Azure expires it.
    state.leader = undefined;
    state.lastLoss = { from: instance.name, at: Date.now(), how: `died (${signal ?? `code ${code}`})` };
    if (!state.stopping) {
      say(
        'demo',
        style.yellow(
          `the leader died without releasing its lease: a follower takes over when it expires, in ${CRASH_EXPECTED}`,
        ),
      );
    }
  }
  if (!state.stopping && !args.tour && instances.every((i) => !isAlive(i.child))) {
    say('demo', 'no instance left; stopping.');
    void shutdown(0);
  }
}

/** Once every instance is up: what to try. */
function maybeIntroduce() {
  if (state.introduced || !instances.every((i) => i.up)) return;
  state.introduced = true;
  const rule = style.dim('─'.repeat(78));
  const first = instances[0].port;
  const lines = [
    rule,
    `${instanceCount} instances compete for one lease blob in ${state.azurite ? 'Azurite' : 'your storage account'}: lease ${LEASE_S} s, renewed every 2.5 s,`,
    `followers retry every ~${RETRY_S} s. Only the leader runs the cron job (every 5 s) and its queue worker.`,
    '',
    `  curl -s localhost:${first}/leader                 who leads, which term (any instance)`,
    `  curl -s localhost:${first}/health                 terminus health with the leader indicator`,
    `  curl -s -XPOST localhost:${first}/jobs/run-now    200 on the leader, 503 + X-Leader-Id elsewhere`,
    '',
    args.tour
      ? 'The tour now crashes the leader, then stops its successor, and measures both takeovers.'
      : `Crash the leader with kill -9 <pid>: a follower takes over once the lease expires (${CRASH_EXPECTED}).\nStop it gracefully with kill <pid>: it releases the lease, a follower takes over in ${GRACEFUL_EXPECTED}.\nCtrl+C stops everything.`,
    rule,
  ];
  for (const line of lines.join('\n').split('\n')) console.log(line);
  if (state.leader && !args.tour) hint();
}

function hint() {
  const { instance } = state.leader;
  say(
    'demo',
    style.dim(
      `leader is ${instance.name}: kill -9 ${instance.pid} to crash it, kill ${instance.pid} to stop it gracefully`,
    ),
  );
}

// ---- the tour ----------------------------------------------------------------------------------

/** Resolves with the first instance event matching `predicate`, rejects after `timeoutMs`. */
function nextEvent(predicate, timeoutMs, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      bus.off('event', listener);
      reject(new Error(`timed out after ${seconds(timeoutMs)} waiting for ${what}`));
    }, timeoutMs);
    const listener = (e) => {
      if (!predicate(e)) return;
      clearTimeout(timer);
      bus.off('event', listener);
      resolve(e);
    };
    bus.on('event', listener);
  });
}

async function waitForLeaderJob(timeoutMs) {
  const isLeaderJob = (e) => e.event === 'job' && e.instance === state.leader?.instance;
  return nextEvent(isLeaderJob, timeoutMs, 'the leader to run its cron job');
}

async function tour() {
  const tourSay = (line) => say('tour', style.bold(line));
  const results = [];
  // Let the cluster settle: everyone up, a leader elected and seen working.
  await waitUntil(() => state.introduced && state.leader !== undefined, 60_000, 'the cluster to elect a leader');
  await waitForLeaderJob(30_000);

  // 1. A crash: the lease stays in the store until it expires.
  const crashed = state.leader.instance;
  tourSay(
    `1/2 kill -9 ${crashed.name} (pid ${crashed.pid}), the leader. Its lease stays until it expires: expect ${CRASH_EXPECTED}.`,
  );
  crashed.expectedExit = true;
  const crashAt = Date.now();
  crashed.child.kill('SIGKILL');
  const failover = await nextEvent(
    (e) => e.event === 'elected' && e.instance !== crashed,
    90_000,
    'a new leader after the crash',
  );
  const jobMoved = await nextEvent(
    (e) => e.event === 'job' && e.instance === failover.instance,
    30_000,
    'the new leader to run the cron job',
  );
  results.push(
    [
      'crash failover (kill -9 → new leader elected)',
      failover.at - crashAt,
      `expected ${CRASH_EXPECTED}: lease ${LEASE_S} s, renewed every 2.5 s, polled every ~${RETRY_S} s`,
    ],
    ['  … and the cron job runs there', jobMoved.at - crashAt, '+ up to one 5 s cron period'],
  );
  tourSay(
    `→ ${failover.instance.name} leads after ${seconds(failover.at - crashAt)}; its first cron run came ${seconds(jobMoved.at - crashAt)} after the crash.`,
  );

  // 2. A graceful stop: drain, release, and a follower wins at its next try.
  const stopped = failover.instance;
  tourSay(
    `2/2 SIGTERM ${stopped.name} (pid ${stopped.pid}), the new leader. It drains and releases its lease: expect ${GRACEFUL_EXPECTED}.`,
  );
  stopped.expectedExit = true;
  const stopAt = Date.now();
  stopped.child.kill('SIGTERM');
  const handover = await nextEvent(
    (e) => e.event === 'elected' && e.instance !== stopped,
    60_000,
    'a new leader after the graceful stop',
  );
  results.push([
    'graceful handover (SIGTERM → new leader elected)',
    handover.at - stopAt,
    `expected ${GRACEFUL_EXPECTED}: until a follower's next poll`,
  ]);
  tourSay(`→ ${handover.instance.name} leads after ${seconds(handover.at - stopAt)}.`);
  await stopped.child.exited;

  const rule = style.dim('─'.repeat(78));
  console.log(rule);
  console.log(style.bold('Measured:'));
  for (const [label, ms, expected] of results)
    console.log(`  ${label.padEnd(50)} ${seconds(ms).padStart(7)}   ${style.dim(`(${expected})`)}`);
  console.log(rule);
  tourSay('done; stopping the cluster.');
}

// ---- start and stop ----------------------------------------------------------------------------

let stopPromise;
/** When the first stop signal came; a later one (after the grace) forces the stop. */
let firstSignalAt;
/**
 * One Ctrl+C can reach us twice: the terminal signals the whole process group, and `npm start`
 * forwards the signal it got to us as well. Repeats within this window are that echo, not the user.
 */
const SIGNAL_ECHO_MS = 1_500;

/** Instances first (they release their leases; Azurite must still answer), then Azurite. */
function shutdown(code) {
  stopPromise ??= (async () => {
    state.stopping = true;
    const live = instances.filter((i) => isAlive(i.child));
    const force = firstSignalAt === undefined ? '' : ' (Ctrl+C again to force)';
    if (live.length > 0)
      say('demo', `stopping ${live.length} instance(s): they finish their work and release the lease…${force}`);
    await Promise.all(live.map((i) => stopChild(i.child, 'SIGTERM', INSTANCE_STOP_TIMEOUT_MS)));
    if (state.azurite) {
      await stopChild(state.azurite.child, 'SIGTERM', AZURITE_STOP_TIMEOUT_MS);
      say('azurite', 'stopped');
    }
    say('demo', 'all processes stopped.');
    process.exit(code);
  })();
  return stopPromise;
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (firstSignalAt === undefined) {
      firstSignalAt = Date.now();
      if (process.stdout.isTTY) process.stdout.write('\n'); // after the ^C the terminal echoed
      void shutdown(0);
      return;
    }
    if (Date.now() - firstSignalAt < SIGNAL_ECHO_MS) return;
    // Another Ctrl+C: the user does not want to wait for a clean release.
    say('demo', style.red('forced stop: killing every process now'));
    for (const child of children) if (isAlive(child)) child.kill('SIGKILL');
    process.exit(130);
  });
}

process.on('uncaughtException', (error) => {
  console.error(error);
  void shutdown(1);
});
process.on('unhandledRejection', (error) => {
  console.error(error);
  void shutdown(1);
});

async function main() {
  // Before Azurite: a taken port should fail fast, with nothing to clean up.
  await checkPortsFree();
  const connection = await storageConnection();
  say('demo', `starting ${instanceCount} sample-app instances on ports ${basePort}–${basePort + instanceCount - 1}`);
  for (let i = 0; i < instanceCount; i++) startInstance(i, connection);
  if (args.tour) {
    try {
      await tour();
      await shutdown(0);
    } catch (error) {
      say('tour', style.red(`failed: ${error.message}`));
      await shutdown(1);
    }
  }
}

/** The store the instances use: yours when configured, else a fresh Azurite in memory. */
async function storageConnection() {
  if (process.env.AZURE_STORAGE_CONNECTION_STRING) {
    // Only the account name: the rest of a connection string is a secret.
    const account =
      /AccountName=([^;]+)/i.exec(process.env.AZURE_STORAGE_CONNECTION_STRING)?.[1] ?? 'from the connection string';
    say('demo', `using your storage account (${account}) from AZURE_STORAGE_CONNECTION_STRING`);
    return {};
  }
  if (process.env.AZURE_STORAGE_ACCOUNT_URL) {
    say(
      'demo',
      `using ${new URL(process.env.AZURE_STORAGE_ACCOUNT_URL).host} from AZURE_STORAGE_ACCOUNT_URL, with DefaultAzureCredential`,
    );
    return {};
  }
  say('demo', 'no AZURE_STORAGE_CONNECTION_STRING: starting Azurite (the Azure Storage emulator) in memory');
  state.azurite = await startAzurite();
  say('azurite', `blob service on ${state.azurite.endpoint} (pid ${state.azurite.child.pid})`);
  state.azurite.child.once('exit', (code, signal) => {
    if (!state.stopping) {
      say('azurite', style.red(`exited unexpectedly (${signal ?? `code ${code}`}); stopping the demo`));
      void shutdown(1);
    }
  });
  return { AZURE_STORAGE_CONNECTION_STRING: state.azurite.connectionString, AZURE_STORAGE_ACCOUNT_URL: '' };
}

async function checkPortsFree() {
  for (let port = basePort; port < basePort + instanceCount; port++) {
    if (!(await portFree(port))) {
      say('demo', style.red(`port ${port} is in use; choose other ports with: npm start -- --port <first port>`));
      process.exit(1);
    }
  }
}

// ---- small helpers -----------------------------------------------------------------------------

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitUntil(condition, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds(timeoutMs)} waiting for ${what}`);
    await sleep(100);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Listens where Nest will (all interfaces) to see whether the port is taken. */
function portFree(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(1_000);
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

main().catch((error) => {
  say('demo', style.red(error.message));
  void shutdown(1);
});
