import type { Etcd3, Watcher } from 'etcd3';
import type { LeaseWatch } from '../lease-store.js';

/**
 * Watches of lease keys for deletion (released, or expired after a crash), one etcd watcher per
 * watch: etcd3 multiplexes them over one stream. `onDeleted` lets the store remember the deletion
 * (its next acquire skips the read).
 */
export class EtcdDeleteWatches {
  private readonly watchers = new Set<Watcher>();

  constructor(
    private readonly client: () => Etcd3,
    /** Each time a watch stream has (re)connected. */
    private readonly onConnected: () => void = () => undefined,
  ) {}

  add(key: string, onDeleted: () => void, onMayBeFree: () => void): LeaseWatch {
    let watcher: Watcher | undefined;
    let closed = false;
    const opened = Promise.resolve()
      .then(() => this.client())
      .then((etcd) => {
        if (closed) return;
        watcher = etcd.watch().key(key).only('delete').watcher();
        this.watchers.add(watcher);
        let connectedBefore = false;
        // After a reconnect etcd3 resumes from the last revision seen, but a spurious wake is cheap.
        watcher.on('connected', () => {
          this.onConnected();
          if (connectedBefore) onMayBeFree();
          connectedBefore = true;
        });
        watcher.on('delete', () => {
          onDeleted();
          onMayBeFree();
        });
        // Best effort: etcd3 reconnects the watch stream itself; polling covers the gap.
        watcher.on('error', () => undefined);
      })
      .catch(() => undefined);
    return {
      close: async () => {
        closed = true;
        await opened;
        if (!watcher) return;
        this.watchers.delete(watcher);
        await watcher.cancel().catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.watchers].map((watcher) => watcher.cancel()));
    this.watchers.clear();
  }
}
