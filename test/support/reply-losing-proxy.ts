import type { Socket } from 'node:net';
import { TcpForwarder } from './tcp-forwarder.js';

/**
 * A TCP forwarder in front of a real server (PostgreSQL, MariaDB, Redis, etcd) that can lose the
 * reply to one request *after the server applied it*: once armed, the first client write carrying
 * `marker` still reaches the server, but everything the server answers on that connection from
 * then on is dropped, and the connection is reset `resetAfterMs` later — what a client sees when
 * a network path or a middlebox dies between its request and the reply. Other connections, and
 * the client's reconnections, pass untouched.
 */
export class ReplyLosingProxy extends TcpForwarder {
  /** Replies lost so far (connections that met an armed marker). */
  repliesLost = 0;
  private armed?: { marker: Buffer; resetAfterMs?: number };
  private readonly timers = new Set<NodeJS.Timeout>();

  static start(targetPort: number): Promise<ReplyLosingProxy> {
    return TcpForwarder.listening(new ReplyLosingProxy(targetPort));
  }

  /**
   * Lose the reply to the next request whose bytes contain `marker` (once), and reset that
   * connection `resetAfterMs` later; without it, the connection stays open and silent.
   */
  loseReplyAfter(marker: string, resetAfterMs?: number): void {
    this.armed = { marker: Buffer.from(marker), resetAfterMs };
  }

  override async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    await super.close();
  }

  protected forward(client: Socket, upstream: Socket): void {
    let losing = false;
    // The end of the previous chunk: a marker may straddle two writes.
    let tail = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      const armed = this.armed;
      if (armed && !losing) {
        const seen = Buffer.concat([tail, chunk]);
        if (seen.includes(armed.marker)) {
          this.armed = undefined;
          this.repliesLost += 1;
          losing = true;
          if (armed.resetAfterMs !== undefined) {
            const timer = setTimeout(() => {
              this.timers.delete(timer);
              client.resetAndDestroy();
              upstream.destroy();
            }, armed.resetAfterMs);
            this.timers.add(timer);
          }
        }
        tail = seen.subarray(Math.max(0, seen.length - armed.marker.length));
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!losing) client.write(chunk);
    });
  }
}

/**
 * A store built by `storeAt(proxyPort)` behind a fresh {@link ReplyLosingProxy} to `targetPort`,
 * marking the acquire by its identity (which travels in the acquire's own request only), or any
 * other request by a marker it carries (e.g. in a leader-state value).
 */
export async function storeBehindReplyLosingProxy<S extends { close?(): Promise<void> }>(
  targetPort: number,
  storeAt: (port: number) => S,
) {
  const proxy = await ReplyLosingProxy.start(targetPort);
  const store = storeAt(proxy.port);
  return {
    store,
    loseNextAcquireReply: (identity: string, how: 'reset' | 'silence') =>
      proxy.loseReplyAfter(identity, how === 'reset' ? 300 : undefined),
    loseNextReplyContaining: (marker: string, how: 'reset' | 'silence') =>
      proxy.loseReplyAfter(marker, how === 'reset' ? 300 : undefined),
    get repliesLost() {
      return proxy.repliesLost;
    },
    close: async () => {
      await store.close?.();
      await proxy.close();
    },
  };
}

/** The port of a server URL (`postgres://…:5432/…`), or `fallback` when the URL names none. */
export function portOf(url: string, fallback: number): number {
  return Number(new URL(url).port || fallback);
}

/** The same URL with another port on loopback: the proxy's. */
export function withPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(port);
  return parsed.href;
}
