import { electionMessages as messages } from './election.messages.js';

// The keys of leader state an app may not write: the public API's rule, not the stores' (a store
// writes any key it is given, the ledger's own through the same call).

/** The once-per-tick ledger's keys: refused by the public writeState, so an app cannot overwrite them. */
export const TICK_KEY_PREFIX = 'tick:';

/** A write through the public API (service, handle, Elector, testing kit): the `tick:` keys are the ledger's. */
export function checkUserStateKey(key: string | undefined): void {
  if (typeof key === 'string' && key.startsWith(TICK_KEY_PREFIX)) throw new TypeError(messages.stateKeyReserved(key));
}
