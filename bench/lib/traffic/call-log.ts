// Every method call on a store object, logged: the store-traffic figure wraps each replica's store in
// a Proxy (every method of the object counts, whatever the contract calls it) that can also hide
// optional methods, so the elector sees a store without a capability — what the figure's "plain"
// column measures. Each call is put in a class by what drives it (see CallClass), from its arguments.

import { STANDBY_KEY_PREFIX } from '../../../lib/election/standby.js';
import { JOB_KEY_PREFIX, TICK_KEY_PREFIX } from '../../../lib/election/state-keys.js';
import type { LeaseStore } from '../../../lib/stores/lease-store.js';

/**
 * What drives a call, hence how it scales to the default timings:
 * - `lease`: the election's own loop (renewals, polls, handover reads, the job board) and the app's
 *   state writes — periods scaled with the timings;
 * - `tick`: the once-per-tick ledger (`tick:` keys): the cron's 1-s period, never scaled;
 * - `jobs`: job control's leader state (`jobs:` keys: run history, catalogue): at most once per renewal;
 * - `slot-renew`: an active follower renewing its candidate slot, every third of the slot's lease;
 * - `slot`: any other call on a slot (a standby trying for one, every standbyPollMs).
 */
export type CallClass = 'lease' | 'tick' | 'jobs' | 'slot-renew' | 'slot';

export interface CallRecord {
  method: string;
  cls: CallClass;
  /** performance.now() at the call and when its promise settled (Infinity while pending). */
  start: number;
  end: number;
  /** Its rejection's message, when its promise rejected. */
  failed?: string;
}

/** The optional methods (and flags) of each capability, as the elector detects them. */
export const CAPABILITY_MEMBERS = {
  handover: ['requestHandover', 'readHandover', 'clearHandover', 'conditionalSpreadRequests', 'listElections'],
  state: ['writeState', 'readState'],
  records: ['readRecord', 'writeRecord'],
} as const;

export type Capability = keyof typeof CAPABILITY_MEMBERS;

/**
 * `store` behind a Proxy that logs every method call into `log` and hides the members of the
 * capabilities not in `expose` (the lease calls and `watch` are never hidden).
 */
export function loggedStore(store: LeaseStore, expose: readonly Capability[], log: CallRecord[]): LeaseStore {
  const hidden = new Set<PropertyKey>(
    (Object.keys(CAPABILITY_MEMBERS) as Capability[])
      .filter((capability) => !expose.includes(capability))
      .flatMap((capability) => CAPABILITY_MEMBERS[capability]),
  );
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    has: (target, key) => !hidden.has(key) && Reflect.has(target, key),
    get(target, key) {
      if (hidden.has(key)) return undefined;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function' || key === 'constructor') return value;
      let counted = wrapped.get(key);
      if (!counted) {
        const method = String(key);
        counted = (...args: unknown[]) => {
          const record: CallRecord = {
            method,
            cls: classOf(method, args),
            start: performance.now(),
            end: Number.POSITIVE_INFINITY,
          };
          log.push(record);
          const settle = () => {
            record.end = performance.now();
          };
          const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
          if (result instanceof Promise) {
            result.then(settle, (error: unknown) => {
              record.failed = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
              settle();
            });
          } else settle();
          return result;
        };
        wrapped.set(key, counted);
      }
      return counted;
    },
  });
}

/** A renewal, plain or folded (`renewWith`: what rides on it is part of the one call). */
export const isRenewal = (method: string) => method === 'renew' || method === 'renewWith';

/** The class of a call from its method and arguments (see CallClass). */
function classOf(method: string, args: unknown[]): CallClass {
  const [first, second, third] = args as [unknown, unknown, unknown];
  const election = electionOf(first);
  if (election?.startsWith(STANDBY_KEY_PREFIX)) return isRenewal(method) ? 'slot-renew' : 'slot';
  const key = method === 'writeState' ? keyOf(third) : method === 'readState' ? keyOf(second) : undefined;
  if (key?.startsWith(TICK_KEY_PREFIX)) return 'tick';
  if (key?.startsWith(JOB_KEY_PREFIX)) return 'jobs';
  return 'lease';
}

/** The election a call is about: its first argument, or that argument's `election` (a lease, a request). */
function electionOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg && typeof arg === 'object' && 'election' in arg && typeof arg.election === 'string') return arg.election;
  return undefined;
}

function keyOf(options: unknown): string | undefined {
  if (options && typeof options === 'object' && 'key' in options && typeof options.key === 'string') return options.key;
  return undefined;
}
