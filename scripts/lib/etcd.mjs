// @ts-check
// A single-member etcd on free loopback ports: for the test run and the bench. The binary comes from
// Debian's `etcd-server` package, installed here when missing (CI machines start without it).
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { isRunning, spawnNode, stopChild } from './child-process.mjs';
import { freePort, waitUntilReady } from './ports.mjs';

/**
 * @typedef {object} Etcd
 * @property {string} endpoint `http://127.0.0.1:<client port>`
 * @property {number} pid of the etcd process itself (e.g. for SIGSTOP/SIGCONT in chaos tests)
 * @property {() => Promise<void>} stop
 */

const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

// etcd does not notice its parent dying, so it runs under a small node supervisor that kills it
// when its stdin closes: even a test runner killed with SIGKILL leaves no etcd behind.
const SUPERVISOR = `
const { spawn } = require('node:child_process');
const [binary, ...args] = process.argv.slice(1);
const etcd = spawn(binary, args, { stdio: ['ignore', 'inherit', 'inherit'] });
process.stdout.write('pid ' + etcd.pid + '\\n');
const stop = () => etcd.kill('SIGTERM');
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
etcd.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
`;

/**
 * Starts a single-member etcd on free loopback ports; `stop()` ends it (closing the supervisor's
 * stdin, SIGKILL after 5 s) and removes its data folder. The data folder is a fresh one under
 * os.tmpdir() (a disk on this machine, not tmpfs: every etcd write waits for a disk sync).
 * @param {{ args?: string[] }} [options] extra etcd flags (the bench's `--unsafe-no-fsync` comparison)
 * @returns {Promise<Etcd>}
 */
export async function startEtcd({ args = [] } = {}) {
  const binary = await ensureEtcdBinary();
  // A free port found by binding port 0 may be taken before etcd binds it: try a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(binary, args);
    } catch (error) {
      if (attempt >= 3 || !/address already in use/.test(String(error))) throw error;
    }
  }
}

/**
 * @param {string} binary
 * @param {string[]} extraArgs
 * @returns {Promise<Etcd>}
 */
async function startOnce(binary, extraArgs) {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'etcd-test-'));
  const args = [
    '--name',
    'default',
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    endpoint,
    '--advertise-client-urls',
    endpoint,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    `default=${peer}`,
    '--log-level',
    'error',
    ...extraArgs,
  ];
  const child = spawnNode(['-e', SUPERVISOR, binary, ...args]);
  let output = '';
  let pid = 0;
  /** @param {Buffer} chunk */
  const collect = (chunk) => {
    output = (output + chunk.toString()).slice(-4_000);
    pid ||= Number(/^pid (\d+)$/m.exec(output)?.[1] ?? 0);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const stop = async () => {
    await stopChild(child, { signal: 'close-stdin', graceMs: STOP_GRACE_MS });
    await rm(dataDir, { recursive: true, force: true });
  };

  try {
    await waitUntilReady({
      ready: () => healthy(endpoint),
      alive: () => isRunning(child),
      timeoutMs: START_TIMEOUT_MS,
      describe: (reason) =>
        reason === 'exited'
          ? `etcd exited (code ${child.exitCode}, signal ${child.signalCode}) before it was healthy:\n${output}`
          : `etcd was not healthy at ${endpoint} within ${START_TIMEOUT_MS} ms:\n${output}`,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, pid, stop };
}

/** GET /health without keep-alive: a pooled socket would hold the test process open for seconds. */
/**
 * @param {string} endpoint
 * @returns {Promise<boolean>}
 */
function healthy(endpoint) {
  return new Promise((resolve) => {
    const request = get(`${endpoint}/health`, { agent: false, timeout: 1_000 }, (response) => {
      let body = '';
      response.on('data', (/** @type {Buffer} */ chunk) => {
        body += chunk.toString();
      });
      response.on('end', () => resolve(response.statusCode === 200 && /"health":\s*"true"/.test(body)));
      response.on('error', () => resolve(false));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/** `etcd` from PATH or /usr/bin; installs Debian's etcd-server when neither has it. */
/** @returns {Promise<string>} */
async function ensureEtcdBinary() {
  const found = await findEtcd();
  if (found) return found;
  const howTo =
    'etcd is needed for the etcd store tests: install it with `apt-get install -y etcd-server` (Debian/Ubuntu) or put an etcd 3.x binary on PATH';
  if (process.getuid?.() !== 0) throw new Error(`${howTo} (not installing it automatically: not running as root)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => execFileSync('apt-get', ['install', '-y', 'etcd-server'], { env, stdio: 'pipe' });
  try {
    try {
      install();
    } catch {
      // A fresh machine may have no package lists yet.
      execFileSync('apt-get', ['update'], { env, stdio: 'pipe' });
      install();
    }
  } catch (error) {
    const detail = /** @type {{ stderr?: Buffer }} */ (error).stderr
      ?.toString()
      .trim()
      .split('\n')
      .slice(-3)
      .join('\n');
    throw new Error(`${howTo}; installing it failed:\n${detail ?? String(error)}`);
  }
  const installed = await findEtcd();
  if (!installed) throw new Error(`${howTo}; apt-get installed etcd-server but no etcd binary was found`);
  return installed;
}

/** @returns {Promise<string | undefined>} */
async function findEtcd() {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin'];
  for (const dir of dirs) {
    const candidate = join(dir, 'etcd');
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
