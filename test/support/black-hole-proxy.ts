import type { Socket } from 'node:net';
import { TcpForwarder } from './tcp-forwarder.js';

/**
 * A TCP forwarder in front of a real server (PostgreSQL, MariaDB, Redis, etcd) that can black-hole
 * every connection: from {@link blackHole} on, no byte travels in either direction, yet every
 * socket stays open (no FIN, no reset) and new connections are accepted — a network partition, or
 * a middlebox that keeps the connection. Bytes are held, not dropped: {@link heal} delivers them,
 * as TCP would after a partition ends. `connections` counts the clients' dials, so a test sees a
 * client give up a dead connection (its keep-alive) by its dialling again.
 */
export class BlackHoleProxy extends TcpForwarder {
  /** Client connections accepted so far. */
  connections = 0;
  private dark = false;
  private readonly live = new Set<Socket>();

  static start(targetPort: number): Promise<BlackHoleProxy> {
    return TcpForwarder.listening(new BlackHoleProxy(targetPort));
  }

  get blackHoled(): boolean {
    return this.dark;
  }

  blackHole(): void {
    this.dark = true;
    for (const socket of this.live) socket.pause();
  }

  heal(): void {
    this.dark = false;
    for (const socket of this.live) socket.resume();
  }

  protected forward(client: Socket, upstream: Socket): void {
    this.connections += 1;
    // Written without back-pressure (a test's traffic is small); a paused socket reads nothing,
    // so what its peer sends waits in the kernel's buffers.
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const socket of [client, upstream]) {
      this.live.add(socket);
      socket.on('close', () => this.live.delete(socket));
      if (this.dark) socket.pause();
    }
  }
}

/**
 * A store built by `storeAt(proxyPort)` behind a fresh {@link BlackHoleProxy} to `targetPort`.
 * `close()` closes the store (unless the test did) and then the proxy.
 */
export async function storeBehindBlackHoleProxy<S extends { close?(): Promise<void> }>(
  targetPort: number,
  storeAt: (port: number) => S,
) {
  const proxy = await BlackHoleProxy.start(targetPort);
  const store = storeAt(proxy.port);
  return {
    store,
    proxy,
    blackHole: () => proxy.blackHole(),
    close: async () => {
      proxy.heal();
      await store.close?.();
      await proxy.close();
    },
  };
}
