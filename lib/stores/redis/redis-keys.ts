/**
 * The key layout of RedisLeaseStore. Every key of an election carries `{<election>}`, a Redis
 * Cluster hash tag: they all live in one slot, so one script can check the lease and write the
 * others.
 */
export class RedisKeys {
  /** The channel a release is published on (one per prefix). */
  readonly channel: string;

  constructor(readonly prefix: string) {
    this.channel = `${prefix}released`;
  }

  /** The lease: JSON `{leaseId, holder, term, meta?}` with a server-side expiry (PX). */
  lease(election: string): string {
    return `${this.prefix}{${election}}`;
  }

  /** The fencing counter (INCR), which outlives the lease. */
  term(election: string): string {
    return `${this.prefix}{${election}}:term`;
  }

  /** The leader-state hash: field = state key, value = JSON `{value, term}`. */
  state(election: string): string {
    return `${this.prefix}{${election}}:state`;
  }

  /** A directed handover's reservation `{to, term}`, with a server-side expiry. */
  reserved(election: string): string {
    return `${this.prefix}{${election}}:reserved`;
  }

  /** The pending handover request. */
  handover(election: string): string {
    return `${this.prefix}{${election}}:handover`;
  }

  /** The shared-records hash: field = record key, value = JSON `{value, version}`; never expires. */
  records(election: string): string {
    return `${this.prefix}{${election}}:records`;
  }

  /** The election a key of this prefix names: only the term counter and the request mark one. */
  electionOf(key: string): string | undefined {
    return /^\{(.+)\}:(term|handover)$/.exec(key.slice(this.prefix.length))?.[1];
  }
}
