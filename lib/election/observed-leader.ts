import type { Subject } from 'rxjs';
import { leaderElectionChannels as channels, publishOn } from '../shared/diagnostics-channels.js';
import type { LeaseMeta } from '../stores/lease-store.js';
import { electionMessages as messages } from './election.messages.js';
import type { ElectorLogger, LeadershipEvent } from './elector.types.js';

/** The holder as the store last told, with its term and meta (none while no holder is known; ours while we lead). */
export class ObservedLeader {
  private id?: string;
  private holderTerm?: number;
  private holderMeta?: LeaseMeta;

  constructor(
    private readonly election: string,
    /** Ours: every diagnostics message names the replica that saw it. */
    private readonly identity: string,
    private readonly logger: ElectorLogger,
    private readonly events: Subject<LeadershipEvent>,
  ) {}

  get leaderId(): string | undefined {
    return this.id;
  }

  /** The holder's term as last observed. */
  get term(): number | undefined {
    return this.holderTerm;
  }

  /** What the holder published with its lease, as last observed. */
  get meta(): LeaseMeta | undefined {
    return this.holderMeta;
  }

  /** The store told us who holds the lease (undefined: nobody); `leader-changed` when that changed. */
  set(leaderId: string | undefined, term?: number, meta?: LeaseMeta): void {
    this.holderTerm = leaderId === undefined ? undefined : term;
    this.holderMeta = leaderId === undefined ? undefined : meta;
    if (this.id === leaderId) return;
    this.id = leaderId;
    this.logger.debug?.(messages.leaderChanged(this.election, leaderId));
    this.events.next({ type: 'leader-changed', leaderId });
    if (channels.leaderChanged.hasSubscribers) {
      const { election, identity } = this;
      publishOn('leaderChanged', { election, identity, leaderId, term: this.holderTerm });
    }
  }
}
