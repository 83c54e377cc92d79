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
  | { kind: 'status'; status: number }
  /**
   * Forward requests of operation `op` (e.g. `lease:acquire`); the first one the server answers
   * with success (it applied it) loses that answer: the connection is reset instead (or, `silent`,
   * left unanswered). Back to pass after that one; counted in `repliesLost`.
   */
  | { kind: 'lose-reply'; op: string; silent?: boolean };

/**
 * One request the proxy saw: when it arrived, what it was (for Azure Blob, e.g. `lease:renew`,
 * `read`, `metadata`), the mode it met, and how it ended.
 */
export interface ProxyCall {
  /** Epoch ms at arrival. */
  at: number;
  method: string;
  path: string;
  /** `lease:<action>` (acquire/renew/release/break/change), `read`, `metadata`, `upload`, `container`, or the method. */
  op: string;
  mode: ProxyMode['kind'];
  /** Sent on to the server (pass, latency). */
  forwarded: boolean;
  /** Status answered to the client, once answered. */
  status?: number;
  /** Epoch ms when the answer's head was sent (or the socket was destroyed). */
  answeredAt?: number;
}

/**
 * An HTTP proxy on loopback between one client process and a real store server (Azurite), whose
 * behaviour the test switches at run time. It counts and logs the requests it sees.
 */
export class FaultProxy {
  requests = 0;
  /** Successful answers dropped in lose-reply mode. */
  repliesLost = 0;
  /** Connections reset in refuse mode (they never carry a request). */
  refusedConnections = 0;
  /** Every request, in arrival order (a refused connection never carries one). */
  readonly log: ProxyCall[] = [];
  private mode: ProxyMode = { kind: 'pass' };
  private readonly sockets = new Set<Socket>();
  private readonly held = new Set<ServerResponse>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly agent = new http.Agent({ keepAlive: true });
  private readonly server = http.createServer((req, res) => this.handle(req, res));

  private constructor(private readonly targetPort: number) {
    this.server.on('connection', (socket) => {
      if (this.mode.kind === 'refuse') {
        this.refusedConnections += 1;
        return void socket.resetAndDestroy();
      }
      this.sockets.add(socket);
      socket.on('error', () => undefined);
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

  get current(): ProxyMode {
    return this.mode;
  }

  set(mode: ProxyMode): void {
    this.mode = mode;
    if (mode.kind === 'refuse') {
      for (const socket of this.sockets) {
        this.refusedConnections += 1;
        socket.resetAndDestroy();
      }
    }
    if (mode.kind !== 'blackhole') {
      // Requests swallowed by a blackhole stay unanswered: their clients gave up long ago.
      for (const res of this.held) res.socket?.destroy();
      this.held.clear();
    }
  }

  /** Switches to `mode` for `ms`, then back to pass; resolves when the window has ended. */
  async window(mode: ProxyMode, ms: number): Promise<{ from: number; until: number }> {
    const from = Date.now();
    this.set(mode);
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.set({ kind: 'pass' });
    return { from, until: Date.now() };
  }

  /** How many requests of each `op` (optionally only those arriving in [from, until)). */
  counts(from = 0, until = Number.POSITIVE_INFINITY): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const call of this.log) {
      if (call.at < from || call.at >= until) continue;
      counts[call.op] = (counts[call.op] ?? 0) + 1;
    }
    return counts;
  }

  /**
   * The lease requests that could start or extend a term, as the proxy saw them arrive (each after
   * its client sent it), with whether the server granted it and for which blob (lease): the
   * independent ledger's evidence.
   */
  leaseSends(): Array<{ op: 'acquire' | 'renew'; at: number; ok: boolean; blob: string }> {
    return this.log
      .filter((call) => call.op === 'lease:acquire' || call.op === 'lease:renew')
      .map((call) => ({
        op: call.op === 'lease:acquire' ? ('acquire' as const) : ('renew' as const),
        at: call.at,
        ok: call.status !== undefined && call.status >= 200 && call.status < 300,
        blob: blobOf(call.path),
      }));
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const res of this.held) res.socket?.destroy();
    for (const socket of this.sockets) socket.destroy();
    this.agent.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.requests += 1;
    const mode = this.mode;
    const call: ProxyCall = {
      at: Date.now(),
      method: req.method ?? '',
      path: req.url ?? '',
      op: operationOf(req),
      mode: mode.kind,
      forwarded: mode.kind === 'pass' || mode.kind === 'latency' || mode.kind === 'lose-reply',
    };
    this.log.push(call);
    res.on('close', () => {
      call.answeredAt ??= Date.now();
      if (res.headersSent) call.status ??= res.statusCode;
    });
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
          const code = mode.status === 503 ? 'ServerBusy' : 'InternalError';
          res.writeHead(mode.status, { 'content-type': 'application/xml', 'x-ms-error-code': code });
          res.end(
            `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>injected by FaultProxy</Message></Error>`,
          );
        });
        return;
      case 'latency': {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.forward(req, res);
        }, mode.ms);
        this.timers.add(timer);
        return;
      }
      case 'lose-reply':
        this.forward(req, res, call.op === mode.op);
        return;
      case 'pass':
        this.forward(req, res);
    }
  }

  private forward(req: IncomingMessage, res: ServerResponse, loseReply = false): void {
    if (res.destroyed) return;
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
        const status = answer.statusCode ?? 502;
        if (loseReply && status < 300 && this.mode.kind === 'lose-reply') {
          // The server applied the request; its client never learns the outcome.
          const silent = this.mode.silent === true;
          this.mode = { kind: 'pass' };
          this.repliesLost += 1;
          answer.resume();
          if (silent) {
            this.held.add(res);
            res.on('close', () => this.held.delete(res));
          } else answer.on('end', () => res.socket?.resetAndDestroy());
          return;
        }
        res.writeHead(status, answer.headers);
        answer.pipe(res);
      },
    );
    // Server down (e.g. Azurite restarting): the client sees its connection reset.
    upstream.on('error', () => res.socket?.destroy());
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}

/** The blob a request is for (`/<account>/<container>/<blob>?…`): with no prefix, the election. */
function blobOf(path: string): string {
  const { pathname } = new URL(path, 'http://proxy');
  return decodeURIComponent(pathname.split('/').slice(3).join('/'));
}

/** Names an Azure Blob REST call from its method, query and headers. */
function operationOf(req: IncomingMessage): string {
  const url = new URL(req.url ?? '/', 'http://proxy');
  const comp = url.searchParams.get('comp');
  const method = req.method ?? '';
  if (comp === 'lease') return `lease:${String(req.headers['x-ms-lease-action'] ?? 'unknown')}`;
  if (comp === 'metadata') return 'metadata';
  if (url.searchParams.get('restype') === 'container') return 'container';
  if (method === 'HEAD' || (method === 'GET' && comp === null)) return 'read';
  if (method === 'PUT' && comp === null) return 'upload';
  return comp ? `${method} ${comp}` : method;
}
