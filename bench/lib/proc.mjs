// @ts-check
// Child processes of the benchmark: spawned with a pipe on stdin (a child exits when it ends, so
// a dead runner leaves no orphans), their `@@b {json}` stdout lines parsed into events.
import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChildGroup, exitOf, hardKill, spawnNode, stopChild } from '../../scripts/lib/child-process.mjs';
import { precompile } from './precompile.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const SWC_REGISTER = join(ROOT, 'test/support/swc-register.mjs');

/** Where {@link compileApps} put the compiled apps; unset, `.ts` children run through the loader. */
let compiledDir = /** @type {string | undefined} */ (undefined);

/**
 * Compiles every bench/apps/*.ts (and what it imports) once, so the `.ts` children spawned from now
 * on run as plain JavaScript (see precompile.mjs). One folder per run: concurrent runs do not clash.
 * @returns {Promise<{ files: number, ms: number, dispose: () => Promise<void> }>}
 */
export async function compileApps() {
  const dir = join(ROOT, '.tmp', `bench-build-${process.pid}`);
  const apps = readdirSync(join(ROOT, 'bench/apps')).filter((name) => name.endsWith('.ts'));
  const result = await precompile(
    ROOT,
    apps.map((name) => `bench/apps/${name}`),
    dir,
  );
  compiledDir = dir;
  return {
    ...result,
    dispose: async () => {
      compiledDir = undefined;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** @typedef {import('../../scripts/lib/child-process.mjs').ExitInfo} ExitInfo */
/** @typedef {{ type: string, at: number, [field: string]: any }} BenchEvent */

/** Every child still running, SIGKILLed (after a SIGCONT) when the runner exits or is interrupted. */
const live = new ChildGroup();
export const killAll = () => live.killAll();

export class Child {
  /** @type {BenchEvent[]} */
  events = [];
  /** @type {Set<() => void>} */
  waiters = new Set();
  stderr = '';
  stdoutTail = '';
  /** @type {ExitInfo | undefined} */
  exitInfo;

  /**
   * @param {string} name label for messages
   * @param {string} file script, relative to the repository; a `.ts` file runs compiled once
   *   {@link compileApps} ran, else through the tests' swc loader (as does `loader: true`)
   * @param {Record<string, string>} env added to the runner's environment
   * @param {{ args?: string[], loader?: boolean }} [options]
   */
  constructor(name, file, env = {}, { args = [], loader = file.endsWith('.ts') } = {}) {
    this.name = name;
    const compiled = compiledDir && file.endsWith('.ts') ? join(compiledDir, file.replace(/\.ts$/, '.js')) : undefined;
    const nodeArgs = loader && !compiled ? ['--import', SWC_REGISTER] : [];
    this.spawnedAt = Date.now();
    this.process = live.add(spawnNode([...nodeArgs, compiled ?? file, ...args], { cwd: ROOT, env }));
    this.pid = this.process.pid;
    this.exited = exitOf(this.process).then((info) => {
      this.exitInfo = info;
      this.notify();
      return info;
    });
    let buffer = '';
    this.process.stdout?.setEncoding('utf8');
    this.process.stdout?.on('data', (chunk) => {
      buffer += chunk;
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
        if (line.startsWith('@@b ')) {
          try {
            this.events.push(JSON.parse(line.slice(4)));
          } catch {
            // a torn line: ignore
          }
        } else {
          this.stdoutTail = `${this.stdoutTail}${line}\n`.slice(-2_000);
        }
      }
      this.notify();
    });
    this.process.stderr?.setEncoding('utf8');
    this.process.stderr?.on('data', (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-4_000);
    });
  }

  get running() {
    return this.exitInfo === undefined;
  }

  notify() {
    for (const waiter of [...this.waiters]) waiter();
  }

  /**
   * The first event (from index `from`) matching `predicate`; rejects after `timeoutMs` or when the child exits.
   * @param {(event: BenchEvent) => boolean} predicate
   * @param {number} timeoutMs
   * @param {string} [label]
   * @param {number} [from]
   * @returns {Promise<BenchEvent>}
   */
  waitFor(predicate, timeoutMs, label = 'event', from = 0) {
    return new Promise((resolve, reject) => {
      /** @type {NodeJS.Timeout | undefined} */
      let timer;
      const check = () => {
        const found = this.events.slice(from).find(predicate);
        if (found) {
          done();
          resolve(found);
        } else if (!this.running) {
          done();
          reject(
            new Error(
              `${this.name} exited (${JSON.stringify(this.exitInfo)}) before ${label}: ${this.stderr.slice(-800)}`,
            ),
          );
        }
      };
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      timer = setTimeout(() => {
        done();
        reject(Object.assign(new Error(`${this.name}: no ${label} within ${timeoutMs} ms`), { timeout: true }));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** @param {string} line */
  send(line) {
    if (this.running) this.process.stdin?.write(`${line}\n`);
  }

  /** @param {NodeJS.Signals} name */
  signal(name) {
    if (this.running) this.process.kill(name);
  }

  hardKill() {
    hardKill(this.process);
  }

  /** SIGKILL and wait for the exit. */
  async kill() {
    this.hardKill();
    await this.exited;
  }

  /**
   * SIGTERM, SIGKILL after `graceMs`; resolves on exit.
   * @param {number} [graceMs]
   */
  async stop(graceMs = 10_000) {
    await stopChild(this.process, { graceMs });
    return this.exited;
  }
}

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
