import type { Etcd3, Watcher } from 'etcd3';
import { settleWithin } from '../../shared/abort.js';
import type { LeaseWatch } from '../lease-store.js';

/**
 * Watches of lease keys for deletion (released, or expired after a crash), one etcd watcher per
 * watch: etcd3 multiplexes them over one stream. `onDeleted` lets the store remember the deletion
 * (its next acquire skips the read).
 *
 * etcd3's cancel sends a cancel request on the stream and waits for etcd's answer, with no
 * deadline: on a connection whose bytes stop while the socket stays open it would wait until the
 * connection is given up (our client's keep-alive, ~10 s; never on a user's client without one).
 * So closing a watch waits at most `cancelWithinMs` (the store's call timeout) and then abandons
 * the watcher: its events are ignored from the close on, and the stream goes with the connection
 * (given up by the keep-alive, or closed by the store's close()).
 */
export class EtcdDeleteWatches {
  private readonly watchers = new Set<Watcher>();

  constructor(
    private readonly client: () => Etcd3,
    /** Each time a watch stream has (re)connected. */
    private readonly onConnected: () => void,
    /** Bound of one watch's cancel. */
    private readonly cancelWithinMs: number,
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
          if (closed) return;
          this.onConnected();
          if (connectedBefore) onMayBeFree();
          connectedBefore = true;
        });
        watcher.on('delete', () => {
          if (closed) return;
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
        await this.cancel([watcher]);
      },
    };
  }

  close(): Promise<void> {
    const watchers = [...this.watchers];
    this.watchers.clear();
    return this.cancel(watchers);
  }

  private cancel(watchers: Watcher[]): Promise<void> {
    return settleWithin(
      watchers.map((watcher) => Promise.resolve().then(() => watcher.cancel())),
      this.cancelWithinMs,
    );
  }
}
