import type { Logger } from '@nestjs/common';
import { ElectionRuntime } from '../leadership/election-runtime.js';
import type { ElectorFactory } from '../leadership/leader-elector.interface.js';
import { instrumentLeaseStore } from '../metrics/instrumented.store.js';
import type { ResolvedLeaderElectionOptions } from './interfaces/leader-election-options.interface.js';

/**
 * One election of the service: its runtime, and the elector `createElector` builds for it from the
 * module options (everything the elector does not take stays with the runtime and the service).
 */
export function createElectionRuntime(
  election: string,
  options: ResolvedLeaderElectionOptions,
  logger: Logger,
  createElector: ElectorFactory,
): ElectionRuntime {
  const {
    shutdownTimeoutMs,
    closeStoreOnShutdown,
    guard,
    stuckAfterMs,
    resignWhenStuck,
    leadershipContext,
    elections,
    electionNames,
    spread,
    ...electorOptions
  } = options;
  const context = { options, logger, clock: options.clock, store: options.store };
  return new ElectionRuntime(context, (runtime) =>
    createElector({
      ...electorOptions,
      election,
      // Timed for the metrics by a pass-through view of the store: the elector never knows.
      store: instrumentLeaseStore(options.store, runtime.work.storeCalls),
      handover: runtime.handoverHooks,
      logger: {
        log: (message) => logger.log(message),
        warn: (message) => logger.warn(message),
        error: (message) => logger.error(message),
        debug: (message) => logger.debug(message),
      },
    }),
  );
}
