// @ts-check
// The sample-app instances and what they report: their JSON log lines become events on `bus`
// (the tour waits on them) and lines for the user (narration.mjs).
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
import { ChildGroup, isRunning, SIGTERM_WHEN_PARENT_GONE, spawnNode } from '../lib/child-process.mjs';
import { onEvent } from './narration.mjs';
import { APP_MAIN, ROOT } from './options.mjs';
import { INSTANCE_COLORS, say, seconds, style } from './output.mjs';
import { CRASH_EXPECTED } from './timings.mjs';

/**
 * @typedef {object} Instance
 * @property {string} name
 * @property {number} port
 * @property {import('node:child_process').ChildProcess} child
 * @property {number | undefined} pid
 * @property {boolean} up
 * @property {import('./output.mjs').Paint} color
 * @property {boolean} expectedExit
 */

/** @typedef {{ instance: Instance, event: string, fields: Record<string, any>, at: number }} InstanceEvent */

export class Cluster {
  /**
   * @param {import('./options.mjs').DemoOptions} options
   * @param {(code: number) => Promise<void>} shutdown called when the last instance is gone
   */
  constructor(options, shutdown) {
    this.options = options;
    this.shutdown = shutdown;
    /** Every child we started; killed outright should the demo exit without stopping them. */
    this.children = new ChildGroup();
    /** Instance events as they arrive; the tour waits on them. */
    this.bus = new EventEmitter();
    this.bus.setMaxListeners(0);
    /** @type {Instance[]} */
    this.instances = [];
    this.state = {
      /** @type {Map<string, { instance: Instance, term: number }>} per election: who leads as far as we know */
      leaders: new Map(),
      /** @type {Map<string, { from: string, at: number, how: string }>} per election: when and how its last leader went away */
      lastLoss: new Map(),
      /** @type {number | undefined} when the first instance was started */
      startedAt: undefined,
      /** @type {string | undefined} the last balanced assignment printed */
      shownSpread: undefined,
      introduced: false,
      stopping: false,
      /** @type {import('../lib/azurite.mjs').Azurite | undefined} */
      azurite: undefined,
    };
  }

  /**
   * @param {number} index
   * @param {Record<string, string>} connection
   */
  startInstance(index, connection) {
    const name = `instance-${index + 1}`;
    this.state.startedAt ??= Date.now();
    const port = this.options.basePort + index;
    const child = this.children.add(
      spawnNode(['--import', SIGTERM_WHEN_PARENT_GONE, APP_MAIN], {
        cwd: ROOT,
        env: {
          ...connection,
          PORT: String(port),
          INSTANCE_ID: name,
          ELECTIONS: this.options.elections.join(','),
          ELECTION: '',
          LOG_FORMAT: 'json',
        },
      }),
    );
    /** @type {Instance} */
    const instance = {
      name,
      port,
      child,
      pid: child.pid,
      up: false,
      color: INSTANCE_COLORS[index],
      expectedExit: false,
    };
    this.instances.push(instance);
    if (child.stdout) createInterface({ input: child.stdout }).on('line', (line) => this.onLogLine(instance, line));
    // stderr carries crashes and Node warnings: always worth showing, dimmed.
    if (child.stderr)
      createInterface({ input: child.stderr }).on('line', (line) => say(name, style.dim(line), instance.color));
    child.once('exit', (code, signal) => this.onExit(instance, code, signal));
    return instance;
  }

  /**
   * @param {Instance} instance
   * @param {string} line
   */
  onLogLine(instance, line) {
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      say(instance.name, style.dim(line), instance.color);
      return;
    }
    const message = entry?.message;
    const context = entry?.context ? `[${entry.context}] ` : '';
    if (message && typeof message === 'object' && typeof message.event === 'string') {
      const { event, text: _text, ...fields } = message;
      onEvent(this, instance, event, fields);
      this.bus.emit('event', { instance, event, fields, at: Date.now() });
      if (this.options.verbose) say(instance.name, style.dim(message.text), instance.color);
    } else if (entry?.level === 'error' || entry?.level === 'fatal') {
      say(instance.name, style.red(`${context}${text(message)}`), instance.color);
    } else if (entry?.level === 'warn') {
      say(instance.name, style.yellow(`${context}${text(message)}`), instance.color);
    } else if (this.options.verbose) {
      say(instance.name, style.dim(`${context}${text(message)}`), instance.color);
    }
  }

  /**
   * @param {Instance} instance
   * @param {number | null} code
   * @param {NodeJS.Signals | null} signal
   */
  onExit(instance, code, signal) {
    const { state } = this;
    instance.up = false;
    // Nest re-raises the shutdown signal once its hooks ran, so a clean stop also ends "by signal".
    const how = signal === 'SIGKILL' ? 'killed (SIGKILL)' : signal ? `exited (${signal})` : `exited with code ${code}`;
    const crashed = !state.stopping && !instance.expectedExit;
    say(instance.name, (crashed ? style.red : style.dim)(`${how} (pid ${instance.pid})`), instance.color);
    const led = this.ledBy(instance);
    for (const election of led) {
      // Died while leading, without releasing: its lease blocks the others until Azure expires it.
      state.leaders.delete(election);
      state.lastLoss.set(election, { from: instance.name, at: Date.now(), how: `died (${signal ?? `code ${code}`})` });
    }
    if (led.length > 0 && !state.stopping) {
      say(
        'demo',
        style.yellow(
          `${instance.name} led ${led.join(', ')} and died without releasing: a follower takes over ${led.length > 1 ? 'each when its lease expires' : 'when the lease expires'}, in ${CRASH_EXPECTED}`,
        ),
      );
    }
    if (!state.stopping && !this.options.tour && this.instances.every((i) => !isRunning(i.child))) {
      say('demo', 'no instance left; stopping.');
      void this.shutdown(0);
    }
  }

  /**
   * The elections `instance` leads, as far as we know.
   * @param {Instance} instance
   * @returns {string[]}
   */
  ledBy(instance) {
    return [...this.state.leaders].filter(([, leader]) => leader.instance === instance).map(([election]) => election);
  }

  /**
   * Every election has a leader, and no two running instances lead more than one apart: what
   * spread converges to (and then stops moving anything).
   */
  balanced() {
    const { leaders } = this.state;
    if (!this.options.elections.every((election) => leaders.has(election))) return false;
    const counts = this.instances.filter((i) => isRunning(i.child)).map((i) => this.ledBy(i).length);
    return counts.length > 0 && Math.max(...counts) - Math.min(...counts) <= 1;
  }

  /**
   * Resolves with the first instance event matching `predicate`, rejects after `timeoutMs`.
   * @param {(event: InstanceEvent) => boolean} predicate
   * @param {number} timeoutMs
   * @param {string} what
   * @returns {Promise<InstanceEvent>}
   */
  nextEvent(predicate, timeoutMs, what) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.bus.off('event', listener);
        reject(new Error(`timed out after ${seconds(timeoutMs)} waiting for ${what}`));
      }, timeoutMs);
      /** @param {InstanceEvent} e */
      const listener = (e) => {
        if (!predicate(e)) return;
        clearTimeout(timer);
        this.bus.off('event', listener);
        resolve(e);
      };
      this.bus.on('event', listener);
    });
  }
}

/** @param {unknown} message */
function text(message) {
  return typeof message === 'string' ? message : JSON.stringify(message);
}
