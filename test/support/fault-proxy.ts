import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ProxyMode =
  | { kind: 'pass' }
  /** Accept, read, never answer: what a dead network path looks like to a client with keep-alive. */
  | { kind: 'blackhole' }
  /** Reset every connection and request. */
  | { kind: 'refuse' }
  /** Forward after a delay. */
  | { kind: 'latency'; ms: number }
  /** Answer every request with this HTTP status (e.g. 503 ServerBusy, 500 InternalError). */
  | { kind: 'status'; status: number };

/**
 * An HTTP proxy on loopback between one client process and a real store server (Azurite), whose
 * behaviour the test switches at run time. It counts the requests it sees.
 */
export class FaultProxy {
  requests = 0;
  private mode: ProxyMode = { kind: 'pass' };
  private readonly sockets = new Set<Socket>();
  private readonly held = new Set<ServerResponse>();
  private readonly agent = new http.Agent({ keepAlive: true });
  private readonly server = http.createServer((req, res) => this.handle(req, res));

  private constructor(private readonly targetPort: number) {
    this.server.on('connection', (socket) => {
      if (this.mode.kind === 'refuse') return void socket.resetAndDestroy();
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(targetPort: number): Promise<FaultProxy> {
    const proxy = new FaultProxy(targetPort);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  set(mode: ProxyMode): void {
    this.mode = mode;
    if (mode.kind === 'refuse') for (const socket of this.sockets) socket.resetAndDestroy();
    if (mode.kind !== 'blackhole') {
      // Requests swallowed by a blackhole stay unanswered: their clients gave up long ago.
      for (const res of this.held) res.socket?.destroy();
      this.held.clear();
    }
  }

  async close(): Promise<void> {
    for (const res of this.held) res.socket?.destroy();
    for (const socket of this.sockets) socket.destroy();
    this.agent.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.requests += 1;
    const mode = this.mode;
    switch (mode.kind) {
      case 'blackhole':
        req.resume();
        this.held.add(res);
        res.on('close', () => this.held.delete(res));
        return;
      case 'refuse':
        req.socket.resetAndDestroy();
        return;
      case 'status':
        req.resume();
        req.on('end', () => {
          res.writeHead(mode.status, {
            'content-type': 'application/xml',
            'x-ms-error-code': mode.status === 503 ? 'ServerBusy' : 'InternalError',
          });
          res.end(`<?xml version="1.0" encoding="utf-8"?><Error><Code>${mode.status === 503 ? 'ServerBusy' : 'InternalError'}</Code><Message>injected by FaultProxy</Message></Error>`);
        });
        return;
      case 'latency':
        setTimeout(() => this.forward(req, res), mode.ms);
        return;
      case 'pass':
        this.forward(req, res);
    }
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: this.targetPort,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: `127.0.0.1:${this.targetPort}` },
        agent: this.agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.socket?.destroy());
    req.pipe(upstream);
  }
}
