import type { Redis } from 'ioredis';
import type { LeaseWatch } from '../lease-store.js';
import { WatchFanOut } from '../store-support.js';

/**
 * One subscriber connection per store (a duplicate of the command client: subscribing takes a
 * connection over), shared by every watched election and held only while someone watches, so a
 * stopped elector leaves no connection behind that would keep the process alive. ioredis
 * reconnects and resubscribes on its own; after a reconnect every watcher is woken once, since a
 * release may have been missed.
 */
export class RedisSubscriber {
  private readonly watchers = new WatchFanOut({ onFirst: () => this.open(), onEmpty: () => this.disconnect() });
  private subscriber?: Redis;
  private closed = false;

  constructor(
    private readonly channel: string,
    private readonly commandClient: () => Redis,
  ) {}

  add(election: string, onMayBeFree: () => void): LeaseWatch {
    return this.watchers.add(election, onMayBeFree);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.disconnect();
  }

  private open(): void {
    if (this.closed || this.subscriber) return;
    let client: Redis;
    try {
      // Subscribing must wait for the connection rather than fail fast, and may retry forever.
      client = this.commandClient().duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
    } catch {
      // The store is closed: best effort, polling remains.
      return;
    }
    this.subscriber = client;
    let readyBefore = false;
    client.on('error', () => undefined);
    client.on('ready', () => {
      if (readyBefore) this.watchers.wakeAll();
      readyBefore = true;
    });
    client.on('message', (channel: string, election: string) => {
      if (channel === this.channel) this.watchers.notify(election);
    });
    void client.subscribe(this.channel).catch(() => undefined);
  }

  private disconnect(): void {
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }
}
