import { type DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { electionMessages } from '../election/election.messages.js';
import type { ElectorFactory } from '../leadership/leader-elector.interface.js';
import type {
  LeaderElectionModuleOptions,
  LeaderOnlyGuardOptions,
} from '../nest/interfaces/leader-election-options.interface.js';
import { LEADER_ELECTION_ELECTOR_FACTORY, LEADER_ELECTION_MODULE_OPTIONS } from '../nest/leader-election.constants.js';
import { LEADER_ELECTION_EXPORTS, LEADER_ELECTION_PROVIDERS } from '../nest/leader-election.module.js';
import { nestMessages } from '../nest/nest.messages.js';
import { TestingElectors } from './testing.elector.js';
import { TestingLeadership } from './testing-leadership.js';

/** Options of `LeaderElectionTestingModule.forRoot()`. */
export interface LeaderElectionTestingOptions {
  /** Lead from the start (term 1), as an instance that won its first acquire. Default true. */
  leader?: boolean;
  /** This instance's identity. Default `'test-instance'`. */
  identity?: string;
  /** The election name (appears in 503 bodies and log lines). Default `'test'`. */
  election?: string;
  /**
   * Several elections, as in `LeaderElectionModule.forRoot({ elections })` (instead of `election`);
   * the first is the default. `leader` applies to each. Move one with the `election` argument of
   * {@link TestingLeadership}'s methods.
   */
  elections?: string[];
  /** How followers answer `@LeaderOnly` routes, as in `LeaderElectionModule.forRoot()`. */
  guard?: LeaderOnlyGuardOptions;
}

/**
 * Drop-in for `LeaderElectionModule.forRoot()` in `Test.createTestingModule()`: the real
 * LeaderElectionService, `@LeaderOnly`, guard and hooks, over an elector that {@link TestingLeadership}
 * moves — no store, no timers, no network. Global, like the real module.
 *
 * ```ts
 * const moduleRef = await Test.createTestingModule({
 *   imports: [LeaderElectionTestingModule.forRoot({ leader: false })],
 *   providers: [BillingJobs],
 * }).compile();
 * await moduleRef.init();
 * await moduleRef.get(TestingLeadership).elect();
 * ```
 */
@Module({})
export class LeaderElectionTestingModule {
  /** The module, leading (or not, with `leader: false`) the elections the options name. */
  static forRoot(options: LeaderElectionTestingOptions = {}): DynamicModule {
    const { leader = true, identity = 'test-instance', elections, guard } = options;
    const election = elections === undefined ? (options.election ?? 'test') : undefined;
    if (typeof leader !== 'boolean') throw new TypeError(nestMessages.optionNotBoolean('leader', leader));
    // Checked here, where the mistake is, rather than at the first elect().
    if (typeof identity !== 'string' || identity === '')
      throw new TypeError(electionMessages.invalidIdentity(identity));
    // No store: the testing elector never calls one, and the service is told not to close one.
    // Spread needs a store to publish counts in: off here, leadership is moved by hand.
    const moduleOptions: Omit<LeaderElectionModuleOptions, 'store'> = {
      ...(elections === undefined ? { election } : { elections }),
      identity,
      closeStoreOnShutdown: false,
      spread: false,
      guard,
    };
    const testingElectors = {
      provide: TestingElectors,
      useFactory: () => new TestingElectors(identity, leader),
    };
    const electorFactory = {
      provide: LEADER_ELECTION_ELECTOR_FACTORY,
      useFactory:
        (electors: TestingElectors): ElectorFactory =>
        (electorOptions) =>
          electors.create(electorOptions.election),
      inject: [TestingElectors],
    };
    return {
      module: LeaderElectionTestingModule,
      global: true,
      imports: [DiscoveryModule],
      providers: [
        { provide: LEADER_ELECTION_MODULE_OPTIONS, useValue: moduleOptions },
        testingElectors,
        electorFactory,
        ...LEADER_ELECTION_PROVIDERS,
        TestingLeadership,
      ],
      exports: [...LEADER_ELECTION_EXPORTS, TestingLeadership],
    };
  }
}
