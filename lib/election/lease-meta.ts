import type { LeaseMeta } from '../stores/lease-store.js';

/**
 * What our lease carries — where to reach us (`advertise`), our `priority`, spread's count,
 * whether a directed handover pins us — and what the store last took of it, so a renew sends the
 * meta only when it changed.
 */
export class OwnLeaseMeta {
  /** How many elections this replica leads (spread sets it; published from the next renewal). */
  private count?: number;
  /** The meta our lease carries in the store, as JSON. */
  private stored?: string;

  constructor(
    private readonly advertise: string | undefined,
    /** The `priority` option (validated): published only when not 0, so a default lease's meta is as before. */
    readonly priority = 0,
  ) {}

  get leaderships(): number | undefined {
    return this.count;
  }

  setLeaderships(count: number | undefined): void {
    this.count = count;
  }

  /** The meta to publish now; undefined when nothing. */
  current(pinned: boolean): LeaseMeta | undefined {
    const meta: LeaseMeta = {};
    if (this.advertise !== undefined) meta.advertise = this.advertise;
    if (this.count !== undefined) meta.leaderships = this.count;
    if (pinned) meta.pinned = true;
    if (this.priority !== 0) meta.priority = this.priority;
    return Object.keys(meta).length > 0 ? meta : undefined;
  }

  /** Won an acquire that sent `meta`: the store holds it. */
  acquiredWith(meta: LeaseMeta | undefined): void {
    this.stored = meta && JSON.stringify(meta);
  }

  /**
   * For a renew: `meta` when it differs from what the store holds, and how to record that it took
   * it. Nothing left to publish while the store still holds something (a `pinned` that ran out, with
   * no other field): an empty meta, so the store does not say pinned for the rest of the term.
   */
  renewal(meta: LeaseMeta | undefined): { changed?: LeaseMeta; taken(): void } {
    const next = meta ?? (this.stored === undefined ? undefined : {});
    const json = next && JSON.stringify(next);
    if (json === this.stored || next === undefined) return { taken: () => undefined };
    return {
      changed: next,
      taken: () => {
        this.stored = json;
      },
    };
  }
}
