// Child processes of the benchmark: spawned with a pipe on stdin (a child exits when it ends, so
// a dead runner leaves no orphans), their `@@b {json}` stdout lines parsed into events.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const SWC_REGISTER = join(ROOT, 'test/support/swc-register.mjs');

const live = new Set();

/** Every child still running: SIGCONT (a stopped child cannot die of SIGKILL's cleanup otherwise) + SIGKILL. */
export function killAll() {
  for (const child of live) child.hardKill();
}
process.on('exit', killAll);

export class Child {
  /**
   * @param {string} name label for messages
   * @param {string} file script; `.ts` files (and `loader: true`) run through the tests' swc loader
   * @param {Record<string, string>} env added to the runner's environment
   */
  constructor(name, file, env = {}, { args = [], loader = file.endsWith('.ts') } = {}) {
    this.name = name;
    this.events = [];
    this.waiters = new Set();
    this.stderr = '';
    this.stdoutTail = '';
    const nodeArgs = loader ? ['--import', SWC_REGISTER] : [];
    this.spawnedAt = Date.now();
    this.process = spawn(process.execPath, [...nodeArgs, file, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.pid = this.process.pid;
    live.add(this);
    this.exited = new Promise((resolve) => {
      this.process.once('exit', (code, signal) => {
        live.delete(this);
        this.exitInfo = { code, signal, at: Date.now() };
        this.notify();
        resolve(this.exitInfo);
      });
    });
    this.process.stdin.on('error', () => undefined);
    let buffer = '';
    this.process.stdout.setEncoding('utf8');
    this.process.stdout.on('data', (chunk) => {
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
    this.process.stderr.setEncoding('utf8');
    this.process.stderr.on('data', (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-4_000);
    });
  }

  get running() {
    return this.exitInfo === undefined;
  }

  notify() {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** The first event (from index `from`) matching `predicate`; rejects after `timeoutMs` or when the child exits. */
  waitFor(predicate, timeoutMs, label = 'event', from = 0) {
    return new Promise((resolve, reject) => {
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

  send(line) {
    if (this.running) this.process.stdin.write(`${line}\n`);
  }

  signal(name) {
    if (this.running) this.process.kill(name);
  }

  hardKill() {
    if (!this.running) return;
    try {
      this.process.kill('SIGCONT');
      this.process.kill('SIGKILL');
    } catch {
      // already gone
    }
  }

  /** SIGKILL and wait for the exit. */
  async kill() {
    this.hardKill();
    await this.exited;
  }

  /** SIGTERM, SIGKILL after `graceMs`; resolves on exit. */
  async stop(graceMs = 10_000) {
    if (!this.running) return this.exitInfo;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.hardKill(), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
