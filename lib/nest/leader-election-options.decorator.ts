import { Inject } from '@nestjs/common';
import { LEADER_ELECTION_MODULE_OPTIONS } from './leader-election.constants.js';

/**
 * Injects the module options as given to `forRoot` (or returned by the `forRootAsync` factory),
 * like `@InjectThrottlerOptions()`: `constructor(@InjectLeaderElectionOptions() options: LeaderElectionModuleOptions)`.
 */
export const InjectLeaderElectionOptions = (): ParameterDecorator & PropertyDecorator =>
  Inject(LEADER_ELECTION_MODULE_OPTIONS);
