import type { Elector, ElectorOptions } from '../election/elector.js';

/**
 * What {@link LeaderElectionService} uses of its elector. The production module builds an
 * {@link Elector}; the testing kit puts a controllable one here, so the real service, explorer,
 * guard and decorator run unchanged on top of it.
 */
export type LeaderElector = Pick<
  Elector,
  | 'identity'
  | 'election'
  | 'timings'
  | 'events$'
  | 'leaderId'
  | 'term'
  | 'signal'
  | 'isLeader'
  | 'start'
  | 'stop'
  | 'resign'
  | 'status'
  | 'health'
  | 'readState'
  | 'writeState'
  | 'writeTickRecord'
  | 'supportsState'
  | 'supportsHandover'
  | 'requestHandover'
  | 'setLeaderships'
  | 'leaderMeta'
>;

/** Builds the service's elector from the module options (with the service's logger). */
export type ElectorFactory = (options: ElectorOptions) => LeaderElector;
