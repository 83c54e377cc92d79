import type { Redis } from 'ioredis';
import { TransientLeaseStoreError } from '../../shared/errors.js';
import { redisMessages } from './redis.messages.js';

/**
 * `replicaAcks` of {@link RedisLeaseStoreOptions}: a write counts only once `replicas` replicas
 * acknowledged it (`WAIT replicas timeoutMs`).
 */
export interface RedisReplicaAcks {
  /** How many replicas must have the write: an integer from 1 to 100. */
  replicas: number;
  /**
   * How long WAIT may block, in ms: an integer from 1 to 10000, default 500. WAIT
   * blocks the connection it runs on (every other command on it queues behind it), and ioredis
   * cannot take it back when the call's signal aborts: keep it well under `renewIntervalMs`.
   */
  timeoutMs?: number;
}

const MAX_REPLICAS = 100;
const DEFAULT_WAIT_MS = 500;
/** WAIT 0 would block forever; above 10 s it would outlast any sensible renew interval. */
const MAX_WAIT_MS = 10_000;

/**
 * The replica-acknowledged write rule (issue #30). Redis replicates asynchronously: a lease written
 * on a primary that fails before the replica has it is gone on the promoted replica, which then
 * lets another instance acquire while the first still leads. After a successful acquire, renew,
 * leader-state or shared-record write, WAIT must report `replicas` acknowledgements, else the call throws a
 * transient error: an acquire is then given back (the unknown-outcome rule of StoreCallKit), a
 * renew does not extend the term (the leader steps down at its deadline unless a later renew is
 * acknowledged). WAIT makes a lost write unlikely, not impossible: it is not consensus.
 */
export class ReplicaAcks {
  private constructor(
    private readonly replicas: number,
    private readonly timeoutMs: number,
  ) {}

  /** Checked at construction, naming the option and its range; undefined when not asked for. */
  static from(option: RedisReplicaAcks | undefined): ReplicaAcks | undefined {
    if (option === undefined) return undefined;
    const { replicas, timeoutMs = DEFAULT_WAIT_MS } = (option ?? {}) as Partial<RedisReplicaAcks>;
    const inRange = (value: unknown, max: number) =>
      typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max;
    if (!inRange(replicas, MAX_REPLICAS)) {
      throw new TypeError(redisMessages.replicaAcksInvalid('replicaAcks.replicas', MAX_REPLICAS, replicas));
    }
    if (!inRange(timeoutMs, MAX_WAIT_MS)) {
      throw new TypeError(redisMessages.replicaAcksInvalid('replicaAcks.timeoutMs', MAX_WAIT_MS, timeoutMs));
    }
    return new ReplicaAcks(replicas as number, timeoutMs);
  }

  /**
   * Waits until the replicas acknowledged every write this connection made so far (ours is the
   * latest), or throws; `wroteOn` is the socket the write's reply came on (read as the reply resolves). Sent only after the script answered "written": a WAIT pipelined with the
   * script would also block refused acquires for the whole timeout while a replica is behind, and
   * would run before the write when the script falls back from EVALSHA to EVAL (a promoted replica
   * has no script cache).
   */
  async confirm(client: Redis, wroteOn: Redis['stream']): Promise<void> {
    const acked = Number(await client.wait(this.replicas, this.timeoutMs));
    // WAIT counts the writes of its own connection. After a reconnect (a demoted primary's clients
    // are killed by Sentinel) ioredis resends an unanswered WAIT on the new connection, which has
    // written nothing, so it answers at once: found by the chaos spec, a "won" acquire whose lease
    // existed nowhere. A write and its WAIT on different connections prove nothing.
    if (client.stream !== wroteOn) {
      throw new TransientLeaseStoreError(redisMessages.replicasUnknown);
    }
    if (acked < this.replicas) {
      throw new TransientLeaseStoreError(redisMessages.replicasBehind(acked, this.replicas, this.timeoutMs));
    }
  }
}
