import type { Socket } from 'node:net';
import { TcpForwarder } from './tcp-forwarder.js';

/** One proxied connection and what waits to cross it, in arrival order (both directions). */
interface Link {
  queue: Array<() => void>;
  closing: boolean;
}

/**
 * A TCP forwarder in front of a real server (PostgreSQL, MariaDB, Redis, etcd, Azurite) that makes
 * the store hang, then answer. While held, every byte in both directions waits in the proxy;
 * sockets stay open, new connections are accepted (their bytes wait too), and a side that closes
 * has its close delivered after its bytes. On `release()` everything queued goes through in the
 * order it came, per connection: the server runs the requests their clients gave up on, and the
 * clients get the answers to requests they abandoned — a stalled network path or a frozen server
 * that recovers, not one that fails.
 */
export class HoldingProxy extends TcpForwarder {
  /** Chunks (and their bytes) that waited in a hold, both directions. */
  heldChunks = 0;
  heldBytes = 0;
  private held = false;
  private readonly links = new Map<Socket, Link>();

  static start(targetPort: number): Promise<HoldingProxy> {
    return TcpForwarder.listening(new HoldingProxy(targetPort));
  }

  /** From now on nothing crosses; returns the epoch ms the hold began. */
  hold(): number {
    this.held = true;
    return Date.now();
  }

  /** Delivers everything queued, in order, and passes bytes again; returns the epoch ms. */
  release(): number {
    this.held = false;
    const at = Date.now();
    for (const link of this.links.values()) for (const step of link.queue.splice(0)) step();
    return at;
  }

  override async close(): Promise<void> {
    this.held = false;
    await super.close();
  }

  protected forward(client: Socket, upstream: Socket): void {
    const link: Link = { queue: [], closing: false };
    this.links.set(client, link);
    const relay = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        const send = () => {
          if (!to.destroyed && !to.writableEnded) to.write(chunk);
        };
        if (!this.held) return send();
        this.heldChunks += 1;
        this.heldBytes += chunk.length;
        link.queue.push(send);
      });
    relay(client, upstream);
    relay(upstream, client);
  }

  protected override closed(client: Socket, upstream: Socket): void {
    const link = this.links.get(client);
    if (link && this.held) {
      // The close travels behind the bytes sent before it (a FIN after the data, as TCP would).
      if (!link.closing) {
        link.closing = true;
        link.queue.push(() => {
          client.end();
          upstream.end();
        });
      }
      return;
    }
    this.links.delete(client);
    super.closed(client, upstream);
  }
}
