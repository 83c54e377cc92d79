import { checkClockOption, checkIdentityOptions } from '../election/elector-options.js';
import { checkPriorityOption } from '../election/priority.js';
import type {
  LeaderElectionModuleOptions,
  LeaderOnlyGuardOptions,
  ResolvedLeaderElectionOptions,
} from './interfaces/leader-election-options.interface.js';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from './leader-election.constants.js';
import { nestMessages as messages } from './nest.messages.js';

/** The longest delay a Node timer honours (2^31 − 1 ms, about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

const GUARD_KEYS = ['exposeLeaderId', 'retryAfter'] as const satisfies readonly (keyof LeaderOnlyGuardOptions)[];

/**
 * Validate and default the module's own options (the Elector validates its own). Throws an error
 * naming the option, so a misconfigured app fails at startup, not at the first shutdown or 503.
 */
export function resolveModuleOptions(options: LeaderElectionModuleOptions): ResolvedLeaderElectionOptions {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(messages.optionNotObject('LeaderElectionModule options', options));
  }
  // Checked here too (each elector checks again): the testing kit builds no Elector.
  checkIdentityOptions(options.identity, options.advertise);
  checkPriorityOption(options.priority);
  // Before any runtime takes it: stuck work, spread and metrics use it besides the electors.
  checkClockOption(options.clock);
  const { shutdownTimeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS, closeStoreOnShutdown = true } = options;
  if (typeof shutdownTimeoutMs !== 'number' || !Number.isFinite(shutdownTimeoutMs) || shutdownTimeoutMs < 0) {
    throw new RangeError(messages.optionNotNonNegative('shutdownTimeoutMs', shutdownTimeoutMs));
  }
  if (typeof closeStoreOnShutdown !== 'boolean') {
    throw new TypeError(messages.optionNotBoolean('closeStoreOnShutdown', closeStoreOnShutdown));
  }
  const { stuckAfterMs, resignWhenStuck = false } = options;
  if (
    stuckAfterMs !== undefined &&
    (typeof stuckAfterMs !== 'number' ||
      !Number.isInteger(stuckAfterMs) ||
      stuckAfterMs < 1 ||
      stuckAfterMs > MAX_TIMER_MS)
  ) {
    throw new RangeError(messages.stuckAfterRange(stuckAfterMs, MAX_TIMER_MS));
  }
  if (typeof resignWhenStuck !== 'boolean')
    throw new TypeError(messages.optionNotBoolean('resignWhenStuck', resignWhenStuck));
  if (resignWhenStuck && stuckAfterMs === undefined) throw new TypeError(messages.resignWhenStuckNeedsStuckAfter);
  const { leadershipContext = true } = options;
  if (typeof leadershipContext !== 'boolean')
    throw new TypeError(messages.optionNotBoolean('leadershipContext', leadershipContext));
  const electionNames = resolveElectionNames(options);
  const { spread = electionNames.length > 1 } = options;
  if (typeof spread !== 'boolean') throw new TypeError(messages.optionNotBoolean('spread', spread));
  return {
    ...options,
    electionNames,
    spread,
    shutdownTimeoutMs,
    closeStoreOnShutdown,
    resignWhenStuck,
    leadershipContext,
    guard: resolveGuardOptions(options.guard),
  };
}

/** The guard's part of the module options, validated and defaulted. */
export function resolveGuardOptions(guard: LeaderOnlyGuardOptions = {}): Required<LeaderOnlyGuardOptions> {
  if (guard === null || typeof guard !== 'object' || Array.isArray(guard)) {
    throw new TypeError(messages.optionNotObject('guard', guard));
  }
  for (const key of Object.keys(guard)) {
    if (!(GUARD_KEYS as readonly string[]).includes(key))
      throw new TypeError(messages.optionUnknown(`guard.${key}`, GUARD_KEYS));
  }
  const { exposeLeaderId = true, retryAfter = true } = guard;
  if (typeof exposeLeaderId !== 'boolean')
    throw new TypeError(messages.optionNotBoolean('guard.exposeLeaderId', exposeLeaderId));
  if (typeof retryAfter !== 'boolean') throw new TypeError(messages.optionNotBoolean('guard.retryAfter', retryAfter));
  return { exposeLeaderId, retryAfter };
}

/** `election` or `elections`, exactly one: the names, the default first. Each name is checked by its elector. */
function resolveElectionNames(options: LeaderElectionModuleOptions): string[] {
  const { election, elections } = options;
  if ((election === undefined) === (elections === undefined)) {
    throw new TypeError(messages.electionsOption(ELECTIONS_EXACTLY_ONE));
  }
  if (election !== undefined) return [election];
  if (!Array.isArray(elections) || elections.length === 0) {
    throw new TypeError(messages.electionsOption('elections must be a non-empty array of election names'));
  }
  const duplicate = elections.find((name, i) => elections.indexOf(name) !== i);
  if (duplicate !== undefined) {
    throw new TypeError(messages.electionsOption(`elections lists "${String(duplicate)}" twice`));
  }
  return [...elections];
}

const ELECTIONS_EXACTLY_ONE =
  "give exactly one of election (one election: election: 'billing') or elections (several: elections: ['billing', 'reports'])";
