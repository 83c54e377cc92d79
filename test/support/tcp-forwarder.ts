import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

/**
 * A TCP forwarder on loopback in front of a real server: each client connection gets its own
 * upstream connection, and closing either side closes both. What travels between them is up to
 * the subclass (`forward`): hold requests, lose replies, …
 */
export abstract class TcpForwarder {
  private readonly sockets = new Set<Socket>();
  private readonly server = createServer((client) => this.pipe(client));

  protected constructor(private readonly targetPort: number) {}

  /** Resolves with `forwarder` once it listens on a free loopback port. */
  protected static async listening<T extends TcpForwarder>(forwarder: T): Promise<T> {
    await new Promise<void>((resolve) => forwarder.server.listen(0, '127.0.0.1', resolve));
    return forwarder;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Wires `client`'s data to `upstream` and back, as the subclass sees fit. */
  protected abstract forward(client: Socket, upstream: Socket): void;

  private pipe(client: Socket): void {
    const upstream = connect({ host: '127.0.0.1', port: this.targetPort });
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        this.closed(client, upstream);
      });
    }
    this.forward(client, upstream);
  }

  /** One side closed: close the other at once. A subclass holding bytes may close it after delivering them. */
  protected closed(client: Socket, upstream: Socket): void {
    client.destroy();
    upstream.destroy();
  }
}
