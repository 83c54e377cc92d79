/**
 * Injection token of the module options (forRoot value or forRootAsync factory result); inject
 * them with `@InjectLeaderElectionOptions()`.
 */
export const LEADER_ELECTION_MODULE_OPTIONS = 'LEADER_ELECTION_MODULE_OPTIONS';

/**
 * @internal Injection token of the service's {@link ElectorFactory}: unset in production (the
 * service builds an Elector), set by the testing kit. Not exported from the package.
 */
export const LEADER_ELECTION_ELECTOR_FACTORY = Symbol('leader-election:elector-factory');

/** Reflect-metadata key marking a `@LeaderOnly()` method (value: true). */
export const LEADER_ONLY_METADATA = 'leader-election:leader-only';

/** Reflect-metadata key of a `@LeaderOnly()` method's declaration (label, resolved options, original method). */
export const LEADER_ONLY_OPTIONS_METADATA = 'leader-election:leader-only-options';

/** Reflect-metadata key listing the leadership hooks of a method (`'elected' | 'revoked' | 'leader-changed'`[]). */
export const LEADERSHIP_HOOKS_METADATA = 'leader-election:hooks';

/**
 * Per-instance link from a provider/controller instance to the election of the app that owns it.
 * The `@LeaderOnly()` wrapper lives on the shared class prototype, so it finds "its" app through
 * the instance it is called on; a Symbol keeps the property out of JSON, spreads and `for…in`.
 * A registered Symbol (`Symbol.for`), so the CommonJS and ESM copies of this package, should an app
 * load both, mark and read the same key.
 */
export const LEADER_ELECTION_BINDING = Symbol.for('@leaderlease/nestjs:binding');

/**
 * String alias of the LeaderElectionService provider. The guard injects it by this token, not by
 * class, so a `@LeaderOnly` route decorated by the other copy (CommonJS vs ESM) of this package
 * still finds the service of the module the app imported.
 */
export const LEADER_ELECTION_SERVICE = '@leaderlease/nestjs:LeaderElectionService';

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

export const LOGGER_CONTEXT = 'LeaderElection';
