// The counting proxy of the store-traffic figure: the tests' TCP forwarder (test/support) in front of
// a real server, for ONE replica's store, so everything it sees is that replica's. It passes every
// byte on unchanged and notes, per connection, the bytes and writes each way and every message the
// client sent (wire-protocols.ts cuts them), stamped on the monotonic clock so each can be matched
// to the store call in flight when it was sent (call-log.ts).
import type { Socket } from 'node:net';
import { TcpForwarder } from '../../../test/support/tcp-forwarder.js';
import { type WireProtocol, wireParser } from './wire-protocols.js';

/** One message a client sent, as the proxy received it. */
export interface WireEvent {
  /** performance.now() when its last byte arrived. */
  at: number;
  connection: number;
  label: string;
  request: boolean;
}

/** What crossed one connection, each way. */
export interface ConnectionTally {
  id: number;
  openedAt: number;
  closedAt?: number;
  bytesToServer: number;
  bytesToClient: number;
  /** TCP reads the proxy got from each side (one per `data` event). */
  writesToServer: number;
  writesToClient: number;
}

export class WireCounter extends TcpForwarder {
  readonly events: WireEvent[] = [];
  readonly connections: ConnectionTally[] = [];

  private constructor(
    targetPort: number,
    private readonly protocol: WireProtocol,
  ) {
    super(targetPort);
  }

  static start(targetPort: number, protocol: WireProtocol): Promise<WireCounter> {
    return TcpForwarder.listening(new WireCounter(targetPort, protocol));
  }

  protected forward(client: Socket, upstream: Socket): void {
    const tally: ConnectionTally = {
      id: this.connections.length,
      openedAt: performance.now(),
      bytesToServer: 0,
      bytesToClient: 0,
      writesToServer: 0,
      writesToClient: 0,
    };
    this.connections.push(tally);
    const parser = wireParser(this.protocol);
    client.on('data', (chunk: Buffer) => {
      tally.bytesToServer += chunk.length;
      tally.writesToServer += 1;
      const at = performance.now();
      for (const message of parser.push(chunk)) this.events.push({ at, connection: tally.id, ...message });
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      tally.bytesToClient += chunk.length;
      tally.writesToClient += 1;
      client.write(chunk);
    });
    client.on('close', () => {
      tally.closedAt ??= performance.now();
    });
  }
}
