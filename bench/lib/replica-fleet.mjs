// @ts-check
// N replicas of bench/apps/fleet-replica.ts on the same E elections (figures 10–12), and the
// leadership timeline their `elected` / `revoked` events make (each child's own Date.now() stamps:
// one machine, one clock).
import { randomBytes } from 'node:crypto';
import { Child } from './proc.mjs';

/** @typedef {import('./impls.mjs').Timings} Timings */
/** @typedef {import('./proc.mjs').BenchEvent} BenchEvent */
/** @typedef {{ at: number, id: string, type: 'elected' | 'revoked', election: string, reason?: string }} Change */

export class ReplicaFleet {
  /** @type {Child[]} */
  replicas = [];

  /**
   * @param {string} store
   * @param {Timings} timings
   * @param {{ replicas: number, elections: number }} size
   */
  constructor(store, timings, { replicas, elections }) {
    const base = `fleet-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
    this.store = store;
    this.timings = timings;
    this.elections = Array.from({ length: elections }, (_, i) => `${base}-e${i}`);
    this.identities = Array.from({ length: replicas }, (_, i) => `${base}-r${i}`);
    // Every process spawned at once: a cold start of the whole app.
    this.replicas = this.identities.map(
      (identity) =>
        new Child(`fleet/${store}:${identity.slice(-2)}`, 'bench/apps/fleet-replica.ts', {
          STORE: store,
          ELECTIONS: this.elections.join(','),
          IDENTITY: identity,
          LEASE_MS: String(timings.leaseMs),
          RENEW_DEADLINE_MS: String(timings.renewDeadlineMs),
          RENEW_MS: String(timings.renewMs),
          RETRY_MS: String(timings.retryMs),
        }),
    );
  }

  /** The most elections one replica may lead once balanced: ⌈E/N⌉. */
  get fairShare() {
    return Math.ceil(this.elections.length / this.replicas.length);
  }

  /**
   * Resolves the epoch ms at which the last replica was up (every election made its first attempt).
   * @param {number} timeoutMs
   */
  async allUp(timeoutMs) {
    const ready = await Promise.all(this.replicas.map((r) => r.waitFor((e) => e.type === 'ready', timeoutMs, 'ready')));
    return Math.max(...ready.map((e) => e.at));
  }

  /** @param {string} identity */
  replica(identity) {
    const replica = this.replicas[this.identities.indexOf(identity)];
    if (!replica) throw new Error(`no replica ${identity}`);
    return replica;
  }

  /** Every leadership change so far, in time order. @returns {Change[]} */
  changes() {
    /** @type {Change[]} */
    const all = [];
    for (const replica of this.replicas) {
      for (const e of replica.events) {
        if (e.type === 'elected' || e.type === 'revoked') {
          all.push({ at: e.at, id: e.id, type: e.type, election: e.election, reason: e.reason });
        }
      }
    }
    return all.sort((a, b) => a.at - b.at || (a.type === 'revoked' ? -1 : 1));
  }

  /**
   * Who leads what after `changes` (a prefix of {@link changes}).
   * @param {Change[]} changes
   */
  leadersAfter(changes) {
    /** @type {Map<string, Set<string>>} election → replicas that believe they lead it */
    const leaders = new Map(this.elections.map((e) => [e, new Set()]));
    for (const c of changes) {
      if (c.type === 'elected') leaders.get(c.election)?.add(c.id);
      else leaders.get(c.election)?.delete(c.id);
    }
    return leaders;
  }

  /**
   * Balanced: every election has exactly one leader and no replica leads more than ⌈E/N⌉.
   * @param {Map<string, Set<string>>} leaders
   */
  isBalanced(leaders) {
    /** @type {Map<string, number>} */
    const count = new Map();
    for (const holders of leaders.values()) {
      if (holders.size !== 1) return false;
      for (const id of holders) count.set(id, (count.get(id) ?? 0) + 1);
    }
    return Math.max(...count.values()) <= this.fairShare;
  }

  /**
   * The epoch ms from which the fleet has been balanced without a change, or undefined when it is
   * not balanced now.
   */
  balancedSince() {
    const changes = this.changes();
    if (!this.isBalanced(this.leadersAfter(changes))) return undefined;
    // Walk back over the changes while the state stays balanced: the last unbalanced → balanced step.
    let since = changes.at(-1)?.at ?? 0;
    for (let i = changes.length - 1; i >= 0; i--) {
      since = /** @type {Change} */ (changes[i]).at;
      if (i === 0 || !this.isBalanced(this.leadersAfter(changes.slice(0, i)))) break;
    }
    return since;
  }

  /** The number of elections each replica leads now, highest first. */
  loads() {
    /** @type {Map<string, number>} */
    const count = new Map(this.identities.map((id) => [id, 0]));
    for (const holders of this.leadersAfter(this.changes()).values()) {
      for (const id of holders) count.set(id, (count.get(id) ?? 0) + 1);
    }
    return [...count.values()].sort((a, b) => b - a);
  }

  async kill() {
    await Promise.all(this.replicas.map((r) => r.kill()));
  }
}

/**
 * Waits until `fleet` has been balanced for `stableMs`; resolves the epoch ms it became balanced.
 * @param {ReplicaFleet} fleet
 * @param {number} stableMs
 * @param {number} timeoutMs
 */
export async function untilStablyBalanced(fleet, stableMs, timeoutMs) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const since = fleet.balancedSince();
    if (since !== undefined && Date.now() - since >= stableMs) return since;
    const dead = fleet.replicas.find((r) => !r.running);
    if (dead) throw new Error(`${dead.name} exited: ${dead.stderr.slice(-400)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not balanced within ${timeoutMs} ms (leaderships ${fleet.loads().join('/')})`);
}
