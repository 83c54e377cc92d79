// Azurite (the Azure Storage emulator, npm `azurite`) as a child process on a free loopback port.
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { dirname, join } from 'node:path';
import type { TestService } from './service.js';

/** The emulator's fixed, publicly documented development account: not a secret. */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_ACCOUNT_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface AzuriteOptions {
  /** Keep data on disk in this folder (survives a stop/start); default in memory only. */
  location?: string;
  /** Listen on this port (e.g. to restart on the port clients already use); default a free one. */
  port?: number;
  /** How long to wait for the port to accept connections. Default 30 s. */
  startTimeoutMs?: number;
}

export interface AzuriteService extends TestService {
  env: { AZURITE_CONNECTION_STRING: string; AZURITE_BLOB_PORT: string };
  port: number;
  connectionString: string;
  /** `http://127.0.0.1:<port>/devstoreaccount1` */
  blobEndpoint: string;
  /** The child process, e.g. for SIGSTOP/SIGCONT in chaos tests. */
  child: ChildProcess;
}

const STOP_GRACE_MS = 5_000;

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

/** Starts one Azurite blob service; `stop()` ends it (SIGTERM, SIGKILL after 5 s) and waits for exit. */
export async function startAzurite(options: AzuriteOptions = {}): Promise<AzuriteService> {
  // A free port found by binding port 0 may be taken before Azurite binds it: try a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options.port ?? (await freePort()), options);
    } catch (error) {
      if (options.port !== undefined || attempt >= 3 || !/EADDRINUSE/.test(String(error))) throw error;
    }
  }
}

async function startOnce(port: number, options: AzuriteOptions): Promise<AzuriteService> {
  // Resolved from the working directory (Jest's rootDir): this file is loaded both as ESM (tests)
  // and as CommonJS (Jest's global setup), so neither import.meta nor __filename exists in both.
  const main = join(
    dirname(createRequire(join(process.cwd(), 'package.json')).resolve('azurite/package.json')),
    'dist/src/blob/main.js',
  );
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
  const child = spawn(process.execPath, ['-e', BOOTSTRAP, main, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: false,
    cwd: options.location,
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  try {
    await waitForPort(port, child, exited, options.startTimeoutMs ?? 30_000, () => output);
  } catch (error) {
    await stopChild(child, exited);
    throw error;
  }

  const blobEndpoint = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`;
  const connectionString = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_ACCOUNT_KEY};BlobEndpoint=${blobEndpoint};`;
  return {
    env: { AZURITE_CONNECTION_STRING: connectionString, AZURITE_BLOB_PORT: String(port) },
    port,
    connectionString,
    blobEndpoint,
    child,
    stop: () => stopChild(child, exited),
  };
}

async function waitForPort(
  port: number,
  child: ChildProcess,
  exited: Promise<void>,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let dead = false;
  void exited.then(() => (dead = true));
  while (!(await canConnect(port))) {
    if (dead) {
      throw new Error(
        `Azurite exited (code ${child.exitCode}, signal ${child.signalCode}) before listening on ${port}:\n${output()}`,
      );
    }
    if (Date.now() > deadline)
      throw new Error(`Azurite did not listen on ${port} within ${timeoutMs} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(1_000);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
    child.stdin?.destroy();
  }
}

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
