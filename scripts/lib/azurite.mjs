// @ts-check
// Azurite (the Azure Storage emulator, npm `azurite`) as a child process on a free loopback port:
// for the test run, the bench and the demo.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { outputTail, spawnNode, stopChild } from './child-process.mjs';
import { canConnect, freePort, waitUntilReady } from './ports.mjs';

/** The emulator's fixed, publicly documented development account: not a secret, but still never printed. */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_ACCOUNT_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

const STOP_GRACE_MS = 5_000;

/**
 * @typedef {object} AzuriteOptions
 * @property {string} [location] keep data on disk in this folder (survives a stop/start); default in memory only
 * @property {number} [port] listen on this port (e.g. to restart on the port clients already use); default a free one
 * @property {number} [startTimeoutMs] how long to wait for the port to accept connections; default 30 s
 * @property {boolean} [outliveCtrlC] ignore SIGINT, for a parent that stops it last itself (the demo)
 */

/**
 * @typedef {object} Azurite
 * @property {number} port
 * @property {string} connectionString
 * @property {string} blobEndpoint `http://127.0.0.1:<port>/devstoreaccount1`
 * @property {import('node:child_process').ChildProcess} child e.g. for SIGSTOP/SIGCONT in chaos tests
 * @property {() => Promise<void>} stop SIGTERM, SIGKILL after 5 s; resolves on exit
 */

// Azurite's CLI parses process.argv, so the bootstrap rewrites argv before loading it. It also
// exits when its stdin closes: a parent that dies (even by SIGKILL) leaves no orphan behind.
// stdin is unref'd so that, once Azurite has closed its servers on SIGTERM, nothing keeps it alive.
const BOOTSTRAP = `
const [main, ...args] = process.argv.slice(1);
process.argv = [process.argv[0], main, ...args];
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
process.stdin.unref();
require(main);
`;

// For the demo: Ctrl+C in a terminal signals the whole foreground process group, Azurite included.
// Azurite must outlive the instances, which release their leases on the way out, so it ignores
// SIGINT and the demo stops it last, with SIGTERM. On SIGTERM Azurite closes its server; should an
// idle keep-alive socket hold that up, it exits anyway.
const IGNORE_CTRL_C = `
const once = process.once;
process.once = function (event, listener) { return event === 'SIGINT' ? this : once.call(this, event, listener); };
process.on('SIGINT', () => {});
process.on('SIGTERM', () => setTimeout(() => process.exit(0), 2000).unref());
`;

/**
 * The connection string of the development account at `blobEndpoint`.
 * @param {string} blobEndpoint
 */
export function azuriteConnectionString(blobEndpoint) {
  return `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_ACCOUNT_KEY};BlobEndpoint=${blobEndpoint};`;
}

/**
 * Starts one Azurite blob service; `stop()` ends it (SIGTERM, SIGKILL after 5 s) and waits for exit.
 * @param {AzuriteOptions} [options]
 * @returns {Promise<Azurite>}
 */
export async function startAzurite(options = {}) {
  // A free port found by binding port 0 may be taken before Azurite binds it: try a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options.port ?? (await freePort()), options);
    } catch (error) {
      if (options.port !== undefined || attempt >= 3 || !/EADDRINUSE/.test(String(error))) throw error;
    }
  }
}

/**
 * @param {number} port
 * @param {AzuriteOptions} options
 * @returns {Promise<Azurite>}
 */
async function startOnce(port, options) {
  const main = join(dirname(createRequire(import.meta.url).resolve('azurite/package.json')), 'dist/src/blob/main.js');
  const args = [
    '--blobHost',
    '127.0.0.1',
    '--blobPort',
    String(port),
    '--skipApiVersionCheck',
    '--disableTelemetry',
    '--silent',
    '--loose',
    ...(options.location ? ['--location', options.location] : ['--inMemoryPersistence']),
  ];
  const bootstrap = options.outliveCtrlC ? IGNORE_CTRL_C + BOOTSTRAP : BOOTSTRAP;
  const child = spawnNode(['-e', bootstrap, main, ...args], { cwd: options.location });
  const output = outputTail(child);
  const stop = async () => {
    await stopChild(child, { signal: 'SIGTERM', graceMs: STOP_GRACE_MS });
    child.stdin?.destroy();
  };
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  try {
    await waitUntilReady({
      ready: () => canConnect(port),
      alive: () => child.exitCode === null && child.signalCode === null,
      timeoutMs,
      describe: (reason) =>
        reason === 'exited'
          ? `Azurite exited (code ${child.exitCode}, signal ${child.signalCode}) before listening on ${port}:\n${output()}`
          : `Azurite did not listen on ${port} within ${timeoutMs} ms:\n${output()}`,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const blobEndpoint = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`;
  return { port, connectionString: azuriteConnectionString(blobEndpoint), blobEndpoint, child, stop };
}
