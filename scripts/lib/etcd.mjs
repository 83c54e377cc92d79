// @ts-check
// etcd on free loopback ports: a single member for the test run and the bench, and a 3-member
// cluster for the store-failover chaos spec (members killed, paused, restarted). The binary comes from
// Debian's `etcd-server` package, installed here when missing (CI machines start without it).
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { get, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { exitOf, isRunning, spawnSupervised, stopChild } from './child-process.mjs';
import { freePort, waitUntilReady } from './ports.mjs';

/**
 * @typedef {object} Etcd
 * @property {string} endpoint `http://127.0.0.1:<client port>`
 * @property {number} pid of the etcd process itself (e.g. for SIGSTOP/SIGCONT in chaos tests)
 * @property {() => Promise<void>} stop
 */

const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

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
  const member = spawnMember(binary, [
    ...memberArgs({ name: 'default', dataDir, endpoint, peer }),
    '--initial-cluster',
    `default=${peer}`,
    ...extraArgs,
  ]);
  const stop = async () => {
    await member.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await member.ready(endpoint);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, pid: member.pid(), stop };
}

/**
 * The flags of one member on loopback.
 * @param {{ name: string, dataDir: string, endpoint: string, peer: string }} member
 * @returns {string[]}
 */
function memberArgs({ name, dataDir, endpoint, peer }) {
  return [
    '--name',
    name,
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
    '--log-level',
    'error',
  ];
}

/**
 * @typedef {object} SupervisedMember
 * @property {import('node:child_process').ChildProcess} child the supervisor
 * @property {() => number} pid etcd's own pid (0 until the supervisor reported it)
 * @property {(endpoint: string, timeoutMs?: number) => Promise<void>} ready resolves once `endpoint` reports healthy
 * @property {() => Promise<void>} stop closes the supervisor's stdin (etcd gets SIGTERM), SIGKILL after 5 s
 */

/**
 * etcd under the supervisor, its output kept for error messages.
 * @param {string} binary
 * @param {string[]} args
 * @returns {SupervisedMember}
 */
function spawnMember(binary, args) {
  const { child, pid, output } = spawnSupervised(binary, args);
  return {
    child,
    pid,
    ready: (endpoint, timeoutMs = START_TIMEOUT_MS) =>
      waitUntilReady({
        ready: async () => pid() > 0 && (await healthy(endpoint)),
        alive: () => isRunning(child),
        timeoutMs,
        describe: (reason) =>
          reason === 'exited'
            ? `etcd exited (code ${child.exitCode}, signal ${child.signalCode}) before it was healthy:\n${output()}`
            : `etcd was not healthy at ${endpoint} within ${timeoutMs} ms:\n${output()}`,
      }),
    stop: async () => {
      await stopChild(child, { signal: 'close-stdin', graceMs: STOP_GRACE_MS });
    },
  };
}

/**
 * @typedef {object} EtcdClusterMember
 * @property {string} name `m1`, `m2`, …
 * @property {string} endpoint `http://127.0.0.1:<client port>`
 * @property {() => number} pid etcd's own pid while it runs (0 once it was killed)
 * @property {() => boolean} running
 */

/**
 * @typedef {object} EtcdCluster
 * @property {string[]} endpoints every member's client endpoint, in member order
 * @property {EtcdClusterMember[]} members
 * @property {() => Promise<EtcdClusterMember | undefined>} leader the member that is Raft leader now,
 *   by the running members' own status (undefined while they have none, or disagree)
 * @property {(member: EtcdClusterMember) => Promise<number>} kill SIGKILL to etcd itself; resolves once it
 *   is gone, with the time the signal was sent
 * @property {(member: EtcdClusterMember) => number} pause SIGSTOP (returns when it was sent)
 * @property {(member: EtcdClusterMember) => number} resume SIGCONT
 * @property {(member: EtcdClusterMember) => Promise<void>} restart starts a killed member again on its
 *   data folder and ports (it rejoins with its Raft state); resolves once it is running, not waiting
 *   for health (a lone member of a lost majority is never healthy)
 * @property {(timeoutMs?: number) => Promise<void>} healthy resolves once every member reports healthy
 * @property {() => Promise<void>} stop ends every member and removes the data folders
 */

/**
 * Starts a `size`-member etcd cluster on free loopback ports (each member its own supervisor and
 * data folder), resolving once every member is healthy (the cluster has a Raft leader).
 * @param {{ size?: number, args?: string[] }} [options] extra etcd flags for every member
 * @returns {Promise<EtcdCluster>}
 */
export async function startEtcdCluster({ size = 3, args = [] } = {}) {
  const binary = await ensureEtcdBinary();
  for (let attempt = 1; ; attempt++) {
    try {
      return await startClusterOnce(binary, size, args);
    } catch (error) {
      if (attempt >= 3 || !/address already in use/.test(String(error))) throw error;
    }
  }
}

/**
 * @param {string} binary
 * @param {number} size
 * @param {string[]} extraArgs
 * @returns {Promise<EtcdCluster>}
 */
async function startClusterOnce(binary, size, extraArgs) {
  /** @type {Array<{ name: string, endpoint: string, peer: string, dataDir: string }>} */
  const specs = [];
  for (let i = 1; i <= size; i++) {
    specs.push({
      name: `m${i}`,
      endpoint: `http://127.0.0.1:${await freePort()}`,
      peer: `http://127.0.0.1:${await freePort()}`,
      dataDir: await mkdtemp(join(tmpdir(), `etcd-m${i}-`)),
    });
  }
  const initialCluster = specs.map((m) => `${m.name}=${m.peer}`).join(',');
  const token = `leaderlease-${process.pid}-${Date.now().toString(36)}`;
  /** @type {Map<string, SupervisedMember>} */
  const running = new Map();
  /** @param {typeof specs[number]} spec */
  const launch = (spec) => {
    const member = spawnMember(binary, [
      ...memberArgs(spec),
      '--initial-cluster',
      initialCluster,
      '--initial-cluster-token',
      token,
      '--initial-cluster-state',
      'new',
      ...extraArgs,
    ]);
    running.set(spec.name, member);
    return member;
  };
  /** @type {EtcdClusterMember[]} */
  const members = specs.map((spec) => ({
    name: spec.name,
    endpoint: spec.endpoint,
    pid: () => {
      const member = running.get(spec.name);
      return member && isRunning(member.child) ? member.pid() : 0;
    },
    running: () => {
      const member = running.get(spec.name);
      return member !== undefined && isRunning(member.child);
    },
  }));
  const stop = async () => {
    for (const member of running.values()) {
      try {
        // A paused member would not see its SIGTERM.
        if (member.pid()) process.kill(member.pid(), 'SIGCONT');
      } catch {
        // gone already
      }
    }
    await Promise.all([...running.values()].map((m) => m.stop()));
    await Promise.all(specs.map((m) => rm(m.dataDir, { recursive: true, force: true })));
  };
  /** @param {EtcdClusterMember} member */
  const supervised = (member) => {
    const found = running.get(member.name);
    if (!found || !isRunning(found.child)) throw new Error(`etcd member ${member.name} is not running`);
    return found;
  };
  const healthyAll = (timeoutMs = START_TIMEOUT_MS) =>
    Promise.all(
      specs.map((spec) => /** @type {SupervisedMember} */ (running.get(spec.name)).ready(spec.endpoint, timeoutMs)),
    ).then(() => undefined);
  for (const spec of specs) launch(spec);
  try {
    await healthyAll();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    endpoints: specs.map((m) => m.endpoint),
    members,
    leader: async () => {
      const statuses = await Promise.all(
        members.filter((m) => m.running()).map(async (m) => ({ m, status: await memberStatus(m.endpoint) })),
      );
      const ids = new Set(statuses.map(({ status }) => status?.leader));
      if (ids.size !== 1) return undefined;
      return statuses.find(({ status }) => status && status.leader !== '0' && status.leader === status.memberId)?.m;
    },
    kill: async (member) => {
      const target = supervised(member);
      const at = Date.now();
      process.kill(target.pid(), 'SIGKILL');
      await exitOf(target.child);
      return at;
    },
    pause: (member) => {
      process.kill(supervised(member).pid(), 'SIGSTOP');
      return Date.now();
    },
    resume: (member) => {
      process.kill(supervised(member).pid(), 'SIGCONT');
      return Date.now();
    },
    restart: async (member) => {
      const spec = specs.find((s) => s.name === member.name);
      if (!spec) throw new Error(`no etcd member ${member.name}`);
      if (member.running()) throw new Error(`etcd member ${member.name} is still running`);
      const started = launch(spec);
      await waitUntilReady({
        ready: async () => started.pid() > 0,
        alive: () => isRunning(started.child),
        timeoutMs: START_TIMEOUT_MS,
        describe: (reason) => `etcd member ${member.name} did not start again (${reason})`,
      });
    },
    healthy: healthyAll,
    stop,
  };
}

/**
 * A member's own view of the cluster: its id and the Raft leader's (`0`: none), via the v3 JSON
 * gateway; undefined when it does not answer within 1 s (killed, paused, or without quorum).
 * @param {string} endpoint
 * @returns {Promise<{ memberId: string, leader: string } | undefined>}
 */
function memberStatus(endpoint) {
  return new Promise((resolve) => {
    const request = httpRequest(
      `${endpoint}/v3/maintenance/status`,
      { method: 'POST', agent: false, timeout: 1_000, headers: { 'content-type': 'application/json' } },
      (response) => {
        let body = '';
        response.on('data', (/** @type {Buffer} */ chunk) => {
          body += chunk.toString();
        });
        response.on('end', () => {
          try {
            const json = JSON.parse(body);
            const memberId = json?.header?.member_id;
            resolve(typeof memberId === 'string' ? { memberId, leader: String(json.leader ?? '0') } : undefined);
          } catch {
            resolve(undefined);
          }
        });
        response.on('error', () => resolve(undefined));
      },
    );
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
    request.end('{}');
  });
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
