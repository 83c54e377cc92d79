import type { Client, Notification } from 'pg';
import type { LeaseWatch } from '../lease-store.js';
import { WatchFanOut } from '../store-support.js';

export interface ListenConnection {
  client: Client;
  /** False for the user's own Client: we only add and remove our LISTEN on it. */
  owned: boolean;
}

/**
 * One LISTEN connection per store, shared by every watched election, held only while someone
 * watches (a stopped elector leaves no connection behind that would keep the process alive). It
 * reconnects on its own with a capped backoff; after a reconnect every watcher is woken once,
 * since a release may have been missed while it was down.
 */
export class PostgresListener {
  private readonly watchers = new WatchFanOut({ onFirst: () => this.start(), onEmpty: () => void this.stop() });
  private connection?: ListenConnection;
  private connecting?: Promise<void>;
  private retryTimer?: NodeJS.Timeout;
  private failures = 0;
  private connectedBefore = false;
  private closed = false;

  constructor(
    private readonly channel: string,
    private readonly open: () => Promise<ListenConnection>,
  ) {}

  add(election: string, onMayBeFree: () => void): LeaseWatch {
    return this.watchers.add(election, onMayBeFree);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stop();
  }

  private get wanted(): boolean {
    return !this.closed && this.watchers.size > 0;
  }

  private async stop(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.connecting?.catch(() => undefined);
    if (this.wanted) return;
    this.connectedBefore = false;
    await this.disconnect();
  }

  private start(): void {
    if (!this.wanted || this.connection || this.connecting || this.retryTimer) return;
    this.connecting = this.connect()
      .then(() => {
        this.failures = 0;
        if (this.connectedBefore) this.watchers.wakeAll();
        this.connectedBefore = true;
      })
      .catch(() => this.retry())
      .finally(() => {
        this.connecting = undefined;
      });
  }

  private async connect(): Promise<void> {
    const connection = await this.open();
    const { client, owned } = connection;
    // Set first, so that a failure anywhere below is cleaned up by disconnect().
    this.connection = connection;
    client.on('notification', this.onNotification);
    if (owned) client.on('error', this.onBroken).on('end', this.onBroken);
    try {
      if (owned) await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (error) {
      await this.disconnect();
      throw error;
    }
    if (!this.wanted) await this.disconnect();
  }

  private async disconnect(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    if (!connection) return;
    const { client, owned } = connection;
    client.off('notification', this.onNotification);
    client.off('error', this.onBroken);
    client.off('end', this.onBroken);
    if (owned) {
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    } else {
      await client.query(`UNLISTEN "${this.channel}"`).catch(() => undefined);
    }
  }

  private readonly onNotification = (message: Notification): void => {
    if (message.channel === this.channel) this.watchers.notify(message.payload ?? '');
  };

  private readonly onBroken = (): void => {
    // While connecting, connect() itself fails and schedules the retry.
    if (!this.wanted || !this.connection || this.connecting) return;
    void this.disconnect().then(() => this.retry());
  };

  private retry(): void {
    if (!this.wanted || this.retryTimer) return;
    this.failures += 1;
    const delay = Math.min(500 * 2 ** (this.failures - 1), 10_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.start();
    }, delay);
    this.retryTimer.unref();
  }
}
