import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LeaderElectionModuleOptions } from './interfaces/leader-election-options.interface.js';
import { LEADER_ELECTION_MODULE_OPTIONS } from './leader-election.constants.js';

/**
 * `forRoot(options)` / `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`.
 * Global by default: the guard that `@LeaderOnly()` puts on routes is instantiated in each
 * controller's module and needs the service from there.
 */
export const { ConfigurableModuleClass: ConfigurableLeaderElectionModule } =
  new ConfigurableModuleBuilder<LeaderElectionModuleOptions>({
    optionsInjectionToken: LEADER_ELECTION_MODULE_OPTIONS,
  })
    .setClassMethodName('forRoot')
    .setFactoryMethodName('createLeaderElectionOptions')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();

/** For `forRootAsync({ useClass | useExisting })`. */
export interface LeaderElectionOptionsFactory {
  /** Builds the module's options; called once, when the module starts. */
  createLeaderElectionOptions(): LeaderElectionModuleOptions | Promise<LeaderElectionModuleOptions>;
}
