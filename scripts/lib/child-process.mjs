// @ts-check
// Child processes of the tooling (demo instances, bench replicas, Azurite, etcd): their exit as a
// promise, a stop that escalates to SIGKILL, a tail of their output for error messages, and a
// group killed outright should this process exit without stopping them in order.
//
// Every child gets a pipe on stdin and stops itself when it closes (see the bootstraps that spawn
// them): even a parent killed with SIGKILL, which runs no exit handler, leaves no orphan behind.
import { spawn } from 'node:child_process';

/** @typedef {import('node:child_process').ChildProcess} ChildProcess */
/** @typedef {{ code: number | null, signal: NodeJS.Signals | null, at: number }} ExitInfo */

/** @type {WeakMap<ChildProcess, Promise<ExitInfo>>} */
const exits = new WeakMap();

/**
 * For `node --import <this> app.js`, when the app is not ours to change (a demo instance, a test
 * app): a closed stdin means the parent is gone, so the app shuts down gracefully (SIGTERM).
 */
export const SIGTERM_WHEN_PARENT_GONE = `data:text/javascript,${encodeURIComponent(
  [
    "const stop = () => process.kill(process.pid, 'SIGTERM');",
    "process.stdin.on('end', stop);",
    "process.stdin.on('error', stop);",
    'process.stdin.resume();',
    'process.stdin.unref();', // watching stdin must not keep the process alive on its own
  ].join('\n'),
)}`;

/**
 * `node <args>` with piped stdin, stdout and stderr; `env` adds to this process's environment.
 * @param {string[]} args
 * @param {{ cwd?: string, env?: Record<string, string | undefined> }} [options]
 * @returns {ChildProcess}
 */
export function spawnNode(args, { cwd, env = {} } = {}) {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  exitOf(child);
  // A child gone before we write to (or close) its stdin must not crash the parent with EPIPE.
  child.stdin?.on('error', () => undefined);
  return child;
}

/** @param {ChildProcess} child */
export const isRunning = (child) => child.exitCode === null && child.signalCode === null;

/**
 * Resolves at the child's 'exit' event with its code, signal and the time. Start it right after the spawn.
 * @param {ChildProcess} child
 * @returns {Promise<ExitInfo>}
 */
export function exitOf(child) {
  let exit = exits.get(child);
  if (!exit) {
    exit = isRunning(child)
      ? new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })))
      : Promise.resolve({ code: child.exitCode, signal: child.signalCode, at: Date.now() });
    exits.set(child, exit);
  }
  return exit;
}

/**
 * SIGKILL, after a SIGCONT: a child stopped by SIGSTOP must not stay around as a stopped zombie.
 * @param {ChildProcess} child
 */
export function hardKill(child) {
  if (!isRunning(child)) return;
  try {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Asks the child to stop (a signal, or closing its stdin), SIGKILLs it after `graceMs`, resolves on exit.
 * @param {ChildProcess} child
 * @param {{ signal?: NodeJS.Signals | 'close-stdin', graceMs: number }} options
 * @returns {Promise<ExitInfo>}
 */
export async function stopChild(child, { signal = 'SIGTERM', graceMs }) {
  const exit = exitOf(child);
  if (!isRunning(child)) return exit;
  if (signal === 'close-stdin') child.stdin?.end();
  else child.kill(signal);
  const timer = setTimeout(() => hardKill(child), graceMs);
  try {
    return await exit;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The last `max` characters the child wrote to stdout and stderr, for error messages.
 * @param {ChildProcess} child
 * @param {number} [max]
 * @returns {() => string}
 */
export function outputTail(child, max = 4_000) {
  let output = '';
  /** @param {Buffer | string} chunk */
  const collect = (chunk) => {
    output = (output + chunk.toString()).slice(-max);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return () => output;
}

// A server that does not notice its parent dying (etcd, redis-server) runs under this node
// supervisor, which kills it with the given signal when its stdin closes: even a test runner killed
// with SIGKILL leaves no server behind. It reports the server's own pid on its first line.
const SUPERVISOR = `
const { spawn } = require('node:child_process');
const [signal, binary, ...args] = process.argv.slice(1);
const server = spawn(binary, args, { stdio: ['ignore', 'inherit', 'inherit'] });
process.stdout.write('pid ' + server.pid + '\\n');
const stop = () => server.kill(signal);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
`;

/**
 * Spawns `binary` under the supervisor; stop it with `stopChild(child, { signal: 'close-stdin' })`.
 * @param {string} binary
 * @param {string[]} args
 * @param {NodeJS.Signals} [kill] what the server gets when the supervisor's stdin closes
 * @returns {{ child: ChildProcess, pid: () => number, output: () => string }} `pid`: the server's own
 *   (0 until reported), for SIGSTOP/SIGKILL in chaos tests; `output`: its last 4,000 characters
 */
export function spawnSupervised(binary, args, kill = 'SIGTERM') {
  const child = spawnNode(['-e', SUPERVISOR, kill, binary, ...args]);
  const output = outputTail(child);
  let pid = 0;
  // Read as it arrives (after outputTail's listener): the first line would scroll out of the tail.
  child.stdout?.on('data', () => {
    pid ||= Number(/^pid (\d+)$/m.exec(output())?.[1] ?? 0);
  });
  return { child, pid: () => pid, output };
}

/** Children SIGKILLed when this process exits with any of them still running (the last resort). */
export class ChildGroup {
  /** @type {Set<ChildProcess>} */
  #children = new Set();

  constructor() {
    process.on('exit', () => this.killAll());
  }

  /**
   * @template {ChildProcess} T
   * @param {T} child
   * @returns {T}
   */
  add(child) {
    this.#children.add(child);
    void exitOf(child).then(() => this.#children.delete(child));
    return child;
  }

  killAll() {
    for (const child of this.#children) hardKill(child);
  }
}
