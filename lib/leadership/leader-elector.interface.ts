import type { Elector, ElectorOptions } from '../election/elector.js';
import type { RenewalRider } from '../election/renewal.js';

/**
 * What {@link LeaderElectionService} uses of its elector. The production module builds an
 * {@link Elector}; the testing kit puts a controllable one here, so the real service, explorer,
 * guard and decorator run unchanged on top of it.
 */
export interface LeaderElector
  extends Pick<
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
    | 'supportsState'
    | 'supportsHandover'
    | 'requestHandover'
    | 'leaderMeta'
  > {
  // Not in the Pick: an @internal member of Elector, stripped from its .d.ts, so a shipped
  // `Pick<Elector, 'setLeaderships'>` would not compile in an app type-checking our declarations.
  /** @internal Spread: the number of elections this replica leads, published with our lease. */
  setLeaderships(count: number | undefined): void;
  /** @internal The library's write of its own `tick:` and `jobs:` keys, fenced like any state write. */
  writeTickRecord(value: unknown, key: string): Promise<void>;
  /** @internal What rides on the renewals (job control); absent on the testing kit's elector. */
  carry?(rider: RenewalRider): () => void;
}

/** Builds the service's elector from the module options (with the service's logger). */
export type ElectorFactory = (options: ElectorOptions) => LeaderElector;
