import { type Channel, channel } from 'node:diagnostics_channel';
import type { LeaseStoreErrorKind } from './errors.js';

/**
 * The names of the `node:diagnostics_channel` channels the library publishes on (Node's
 * `<module>:<event>` convention). Subscribe with `diagnostics_channel.subscribe(name, fn)`; each
 * message is a plain object ({@link LeaderElectionChannelMessages} has their fields) and never holds
 * a secret. Published by the `Elector` itself (so with or without Nest) and by the leader-only runs;
 * nothing is built when a channel has no subscriber. A subscriber that throws is Node's business:
 * `diagnostics_channel` rethrows it as an uncaught exception, so keep subscribers safe.
 */
export const LEADER_ELECTION_CHANNELS = Object.freeze({
  /** This replica became leader of an election (a new term). */
  elected: 'leaderlease:elected',
  /** This replica's term ended (deadline, lease lost, resigned, handover, stopped). */
  revoked: 'leaderlease:revoked',
  /** The leader this replica knows of changed (any replica, leader or not). */
  leaderChanged: 'leaderlease:leader-changed',
  /** A handover request: recorded by this replica, or honoured or declined by this leader. */
  handover: 'leaderlease:handover',
  /** A store call of the elector failed (timed out, refused, lost). */
  storeCallFailed: 'leaderlease:store-call-failed',
  /** A leader-only run (`@LeaderOnly` call, `runIfLeader`) started or finished. */
  leaderOnlyRun: 'leaderlease:leader-only-run',
  /** A leader-only call was skipped: not leading, or stepping down. */
  leaderOnlySkipped: 'leaderlease:leader-only-skipped',
} as const);

/**
 * What every message carries: the election and this replica's identity (and our term where one exists).
 * @inline
 */
interface ChannelMessageBase {
  /** The election (lease name). */
  election: string;
  /** This replica's identity. */
  identity: string;
}

/** The message of each channel of {@link LEADER_ELECTION_CHANNELS}, by its key. */
export interface LeaderElectionChannelMessages {
  /** On `leaderlease:elected`. */
  elected: ChannelMessageBase & {
    /** Our new term (the fencing token). */
    term: number;
    /** Wall-clock time (epoch ms) until which we act as leader unless the next renewal succeeds. */
    validUntil: number;
  };
  /** On `leaderlease:revoked`. */
  revoked: ChannelMessageBase & {
    /** The term that ended. */
    term: number;
    /** Why it ended (the same text as the log line). */
    reason: string;
  };
  /** On `leaderlease:leader-changed`. */
  leaderChanged: ChannelMessageBase & {
    /** The leader now known (ours while we lead); undefined when nobody is known to lead. */
    leaderId: string | undefined;
    /** The leader's term as the store told, when known. */
    term: number | undefined;
  };
  /** On `leaderlease:handover`. */
  handover: ChannelMessageBase & {
    /** `requested`: this replica recorded it; `honoured` / `declined`: this leader judged it. */
    phase: 'requested' | 'honoured' | 'declined';
    /** The term the request is for (the leader's). */
    term: number;
    /** The request's id. */
    requestId: string;
    /** Who should lead next; undefined: any other replica. */
    to: string | undefined;
    /** The request's reason (`operator` by default, `spread` for spread's requests). */
    reason: string;
    /** Who asked. */
    requestedBy: string;
    /** For `declined`: why. */
    declinedBecause?: string;
  };
  /** On `leaderlease:store-call-failed`. */
  storeCallFailed: ChannelMessageBase & {
    /** Our term while we lead; undefined otherwise. */
    term: number | undefined;
    /** The store's name (`azure-blob`, `postgres`, …). */
    store: string;
    /** Which call failed. */
    call:
      | 'acquire'
      | 'renew'
      | 'release'
      | 'read'
      | 'readState'
      | 'writeState'
      | 'readHandover'
      | 'requestHandover'
      | 'clearHandover'
      | 'readRecord'
      | 'acquireSlot'
      | 'renewSlot';
    /** How the elector treats it: `transient` (retried), `fatal` (auth/config) or `lost`. */
    kind: LeaseStoreErrorKind;
    /** The typed error's message: the text the log line and `status().lastError` show (stores keep secrets out of it). */
    message: string;
  };
  /** On `leaderlease:leader-only-run`. */
  leaderOnlyRun: ChannelMessageBase & {
    /** The term the run belongs to. */
    term: number;
    /** `Class.method` of a `@LeaderOnly` method, or the name given to `runIfLeader`. */
    handler: string;
    /** `started` before the call; `finished` once it returned or its promise settled. */
    phase: 'started' | 'finished';
    /** For a once-per-tick method: the tick's scheduled time (epoch ms). */
    tick?: number;
    /** For `finished`: `ok`, or `error` when it threw or rejected. */
    outcome?: 'ok' | 'error';
    /** For `finished`: how long it ran (ms). */
    durationMs?: number;
  };
  /** On `leaderlease:leader-only-skipped`. */
  leaderOnlySkipped: ChannelMessageBase & {
    /** `Class.method` of a `@LeaderOnly` method, or the name given to `runIfLeader`. */
    handler: string;
    /** The leader this replica knows of (undefined when none is known). */
    leaderId: string | undefined;
    /** True when this replica still holds the lease but is stepping down (draining for a handover or shutdown). */
    steppingDown: boolean;
  };
}

type ChannelKey = keyof typeof LEADER_ELECTION_CHANNELS;

/** @internal The store calls the elector makes, as named on `storeCallFailed`. */
export type StoreCallName = LeaderElectionChannelMessages['storeCallFailed']['call'];

/**
 * @internal The channels, made once (a channel is process-wide by name: the CommonJS and ESM copies
 * of the package publish on the same ones). Check `hasSubscribers` before building a message.
 */
export const leaderElectionChannels = Object.fromEntries(
  Object.entries(LEADER_ELECTION_CHANNELS).map(([key, name]) => [key, channel(name)]),
) as { readonly [K in ChannelKey]: Channel };

/** @internal Publishes `message` on `key`'s channel; callers check `hasSubscribers` first. */
export function publishOn<K extends ChannelKey>(key: K, message: LeaderElectionChannelMessages[K]): void {
  leaderElectionChannels[key].publish(message);
}
