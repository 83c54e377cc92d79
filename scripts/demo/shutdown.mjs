// @ts-check
// Stopping in order: instances first (they release their leases; Azurite must still answer), then
// Azurite. Children are never detached: should the demo die without this (even by SIGKILL), every
// child sees its stdin close and stops itself, so no process is left behind.
import { isRunning, stopChild } from '../lib/child-process.mjs';
import { say, style } from './output.mjs';
import { AZURITE_STOP_TIMEOUT_MS, INSTANCE_STOP_TIMEOUT_MS } from './timings.mjs';

/**
 * One Ctrl+C can reach us twice: the terminal signals the whole process group, and `npm start`
 * forwards the signal it got to us as well. Repeats within this window are that echo, not the user.
 */
const SIGNAL_ECHO_MS = 1_500;

export class Shutdown {
  /** @type {Promise<void> | undefined} */
  #stopping;
  /** @type {number | undefined} when the first stop signal came; a later one (after the echo window) forces the stop */
  #firstSignalAt;
  /** @type {import('./cluster.mjs').Cluster | undefined} */
  cluster;

  /**
   * Stops everything in order, then exits with `code`; later calls return the same promise.
   * @param {number} code
   * @returns {Promise<void>}
   */
  run(code) {
    this.#stopping ??= (async () => {
      const cluster = this.cluster;
      if (cluster) {
        cluster.state.stopping = true;
        const live = cluster.instances.filter((i) => isRunning(i.child));
        const force = this.#firstSignalAt === undefined ? '' : ' (Ctrl+C again to force)';
        if (live.length > 0)
          say('demo', `stopping ${live.length} instance(s): they finish their work and release the lease…${force}`);
        await Promise.all(live.map((i) => stopChild(i.child, { graceMs: INSTANCE_STOP_TIMEOUT_MS })));
        if (cluster.state.azurite) {
          await stopChild(cluster.state.azurite.child, { graceMs: AZURITE_STOP_TIMEOUT_MS });
          say('azurite', 'stopped');
        }
      }
      say('demo', 'all processes stopped.');
      process.exit(code);
    })();
    return this.#stopping;
  }

  /** Ctrl+C (or SIGTERM, SIGHUP): a clean stop; again, after the echo window, a forced one. */
  handleSignals() {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
      process.on(signal, () => {
        if (this.#firstSignalAt === undefined) {
          this.#firstSignalAt = Date.now();
          if (process.stdout.isTTY) process.stdout.write('\n'); // after the ^C the terminal echoed
          void this.run(0);
          return;
        }
        if (Date.now() - this.#firstSignalAt < SIGNAL_ECHO_MS) return;
        // Another Ctrl+C: the user does not want to wait for a clean release.
        say('demo', style.red('forced stop: killing every process now'));
        this.cluster?.children.killAll();
        process.exit(130);
      });
    }
    /** @param {unknown} error */
    const crash = (error) => {
      console.error(error);
      void this.run(1);
    };
    process.on('uncaughtException', crash);
    process.on('unhandledRejection', crash);
  }
}
