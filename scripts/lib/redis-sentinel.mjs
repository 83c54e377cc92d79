// @ts-check
// A Redis primary, its replicas (one by default) and three Sentinels on free loopback ports, for the failover chaos
// spec and its bench (issue #30). Never the machine's Redis: every server is a fresh one in a temp
// folder, without persistence (`--save "" --appendonly no`), under a supervisor that kills it when
// this process goes away (even by SIGKILL), like scripts/lib/etcd.mjs does etcd.
//
// Everyone but one reaches the primary through a gate (a TCP forwarder in this process): the
// replicas replicate through it, the Sentinels monitor it there, and clients resolving the master
// through Sentinel get the gate's address. `gate.cut()` is a network partition that leaves the
// primary alone with the clients that reach it directly (ioredis `natMap`, see `primaryNatMap`):
// the Sentinels then promote a replica, while the old primary keeps accepting writes. `heal()`
// ends the partition; the Sentinels then turn the old primary into a replica of the new one.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { isRunning, spawnSupervised, stopChild } from './child-process.mjs';
import { freePort, waitUntilReady } from './ports.mjs';

/**
 * @typedef {object} RedisServer
 * @property {number} port
 * @property {number} pid of redis-server itself (SIGKILL, SIGSTOP in chaos tests)
 * @property {() => boolean} alive
 */
/**
 * @typedef {object} Gate
 * @property {number} port where everyone but the direct clients reaches the primary
 * @property {() => void} cut close every connection through it and refuse new ones (a partition)
 * @property {() => void} heal forward again
 */
/**
 * @typedef {object} RedisSentinelTopology
 * @property {string} masterName the name the Sentinels monitor (`mymaster`)
 * @property {RedisServer} primary
 * @property {RedisServer[]} replicas
 * @property {RedisServer[]} sentinels
 * @property {Gate} gate
 * @property {Array<{ host: string, port: number }>} sentinelAddresses for ioredis `sentinels`
 * @property {Record<string, { host: string, port: number }>} primaryNatMap ioredis `natMap` that
 *   takes a client to the primary directly, past the gate (it stays with the primary in a partition)
 * @property {() => Promise<{ host: string, port: number } | undefined>} masterAddress what a quorum-less
 *   first Sentinel answers to `SENTINEL get-master-addr-by-name`
 * @property {() => Promise<void>} stop
 */

const START_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 3_000;
const MASTER = 'mymaster';

/**
 * Starts the topology and waits until the replicas are in sync and every Sentinel knows them
 * and its two peers. Timings are short for tests: `downAfterMs` (default 1000) until a Sentinel
 * calls the primary down, `failoverTimeoutMs` (default 3000).
 * `sentinels: 0` starts the primary and its replicas only; `replicas` (default 1) replicate it.
 * @param {{ downAfterMs?: number, failoverTimeoutMs?: number, sentinels?: number, replicas?: number }} [options]
 * @returns {Promise<RedisSentinelTopology>}
 */
export async function startRedisSentinel({
  downAfterMs = 1_000,
  failoverTimeoutMs = 3_000,
  sentinels: count = 3,
  replicas: replicaCount = 1,
} = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'redis-sentinel-'));
  /** @type {Array<() => Promise<unknown>>} */
  const stops = [];
  const stop = async () => {
    await Promise.all(stops.splice(0).map((s) => s()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const primary = await startServer(dir, 'primary', []);
    stops.push(primary.stop);
    const gate = await startGate(primary.port);
    stops.push(gate.close);
    /** @type {Array<RedisServer & { stop: () => Promise<unknown> }>} */
    const replicas = [];
    for (let i = 1; i <= replicaCount; i++) {
      const replica = await startServer(dir, `replica-${i}`, ['--replicaof', '127.0.0.1', String(gate.port)]);
      stops.push(replica.stop);
      replicas.push(replica);
      await waitFor('the replica in sync', replica, () =>
        info(replica.port, 'replication').then((text) => /master_link_status:up/.test(text)),
      );
    }
    /** @type {RedisServer[]} */
    const sentinels = [];
    for (let i = 1; i <= count; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${i}.conf`);
      // The config file must be writable: a Sentinel rewrites it with what it learns.
      await writeFile(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${MASTER} 127.0.0.1 ${gate.port} 2`,
          `sentinel down-after-milliseconds ${MASTER} ${downAfterMs}`,
          `sentinel failover-timeout ${MASTER} ${failoverTimeoutMs}`,
          `sentinel parallel-syncs ${MASTER} 1`,
          '',
        ].join('\n'),
      );
      const sentinel = await supervise(`sentinel-${i}`, [conf, '--sentinel'], port);
      stops.push(sentinel.stop);
      sentinels.push(sentinel);
    }
    for (const sentinel of sentinels) {
      await waitFor('every Sentinel to know the replica and its peers', sentinel, async () => {
        const master = /** @type {string[]} */ (await command(sentinel.port, 'SENTINEL', 'MASTER', MASTER));
        const field = (/** @type {string} */ name) => Number(master[master.indexOf(name) + 1]);
        return field('num-slaves') === replicaCount && field('num-other-sentinels') === count - 1;
      });
    }
    const sentinelAddresses = sentinels.map((s) => ({ host: '127.0.0.1', port: s.port }));
    return {
      masterName: MASTER,
      primary: view(primary),
      replicas: replicas.map(view),
      sentinels: sentinels.map(view),
      gate: { port: gate.port, cut: gate.cut, heal: gate.heal },
      sentinelAddresses,
      primaryNatMap: { [`127.0.0.1:${gate.port}`]: { host: '127.0.0.1', port: primary.port } },
      masterAddress: async () => {
        if (sentinels.length === 0) return undefined;
        const reply = /** @type {string[] | null} */ (
          await command(sentinels[0].port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER)
        );
        return reply ? { host: reply[0], port: Number(reply[1]) } : undefined;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * @param {{ port: number, pid: number, alive: () => boolean }} server
 * @returns {RedisServer}
 */
const view = ({ port, pid, alive }) => ({ port, pid, alive });

/**
 * @param {string} dir
 * @param {string} name
 * @param {string[]} extra
 */
async function startServer(dir, name, extra) {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'];
  return supervise(name, [...args, '--dbfilename', `${name}.rdb`, ...extra], port);
}

/**
 * @param {string} name
 * @param {string[]} args
 * @param {number} port
 */
async function supervise(name, args, port) {
  // SIGKILL when the supervisor goes: nothing on disk to save.
  const { child, pid, output } = spawnSupervised('redis-server', args, 'SIGKILL');
  const server = {
    port,
    get pid() {
      return pid();
    },
    alive: () => isRunning(child),
    stop: () => stopChild(child, { signal: 'close-stdin', graceMs: STOP_GRACE_MS }),
  };
  try {
    await waitUntilReady({
      ready: async () => pid() > 0 && (await command(port, 'PING').catch(() => undefined)) === 'PONG',
      alive: () => isRunning(child),
      timeoutMs: START_TIMEOUT_MS,
      describe: (reason) => `redis-server (${name}) ${reason === 'exited' ? 'exited' : 'did not answer'}:\n${output()}`,
    });
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

/**
 * @param {string} what
 * @param {{ alive: () => boolean }} server
 * @param {() => Promise<boolean>} ready
 */
function waitFor(what, server, ready) {
  return waitUntilReady({
    ready: () => ready().catch(() => false),
    alive: server.alive,
    timeoutMs: START_TIMEOUT_MS,
    describe: () => `Redis Sentinel topology: timed out waiting for ${what}`,
  });
}

/**
 * One command on a short-lived connection (no retries, no offline queue).
 * @param {number} port
 * @param {string} name
 * @param {...string} args
 * @returns {Promise<unknown>}
 */
export async function command(port, name, ...args) {
  const redis = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await redis.call(name, ...args);
  } finally {
    redis.disconnect();
  }
}

/**
 * `INFO <section>` of the server on `port`.
 * @param {number} port
 * @param {string} section
 * @returns {Promise<string>}
 */
export async function info(port, section) {
  return String(await command(port, 'INFO', section));
}

/**
 * @param {number} targetPort
 * @returns {Promise<{ port: number, cut: () => void, heal: () => void, close: () => Promise<void> }>}
 */
async function startGate(targetPort) {
  /** @type {Set<import('node:net').Socket>} */
  const sockets = new Set();
  let open = true;
  const server = createServer((client) => {
    // A partition as the peers see it: the connection drops (a reset), and so does every new one.
    if (!open) return void client.destroy();
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    cut: () => {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    heal: () => {
      open = true;
    },
    close: async () => {
      open = false;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
}
