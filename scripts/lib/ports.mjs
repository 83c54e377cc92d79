// @ts-check
// Ports for the tooling (demo, bench, test setup): a free loopback port, and whether something listens.
import { connect, createServer } from 'node:net';
import getPort from 'get-port';

/**
 * A loopback port nobody listens on right now (also: an "unreachable server" for tests). Another
 * process may still take it before the caller binds it: servers started on it retry on EADDRINUSE.
 * @returns {Promise<number>}
 */
export function freePort() {
  return getPort({ host: '127.0.0.1' });
}

/**
 * Whether a TCP connection to `host:port` succeeds within `timeoutMs`.
 * @param {number} port
 * @param {{ host?: string, timeoutMs?: number }} [options]
 * @returns {Promise<boolean>}
 */
export function canConnect(port, { host = '127.0.0.1', timeoutMs = 1_000 } = {}) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(timeoutMs);
    /** @param {boolean} ok */
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

/**
 * Whether `port` can be bound on all interfaces, where a Nest app listens (a free loopback port may
 * still be taken on another interface).
 * @param {number} port
 * @returns {Promise<boolean>}
 */
export function portFree(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/**
 * Polls `ready()` every 100 ms until it resolves true. Throws when `alive()` turns false or after
 * `timeoutMs`; `describe(reason)` words the error (e.g. with the child's output).
 * @param {{ ready: () => Promise<boolean>, alive: () => boolean, timeoutMs: number,
 *   describe: (reason: 'exited' | 'timeout') => string }} options
 * @returns {Promise<void>}
 */
export async function waitUntilReady({ ready, alive, timeoutMs, describe }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready()) return;
    if (!alive()) throw new Error(describe('exited'));
    if (Date.now() > deadline) throw new Error(describe('timeout'));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
