import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FaultProxy } from '../fault-proxy.js';

async function get(port: number, timeoutMs = 2000): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/x', signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.name));
  });
}

describe('FaultProxy', () => {
  let target: http.Server;
  let proxy: FaultProxy;

  beforeAll(async () => {
    target = http.createServer((_, res) => res.end('ok'));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    proxy = await FaultProxy.start((target.address() as AddressInfo).port);
  });

  afterAll(async () => {
    await proxy.close();
    await new Promise((resolve) => target.close(resolve));
  });

  it('passes, answers errors, blackholes, refuses and delays on command', async () => {
    expect(await get(proxy.port)).toBe(200);
    proxy.set({ kind: 'status', status: 503 });
    expect(await get(proxy.port)).toBe(503);
    proxy.set({ kind: 'blackhole' });
    expect(await get(proxy.port, 300)).toBe('ABORT_ERR');
    proxy.set({ kind: 'refuse' });
    expect(await get(proxy.port)).toBe('ECONNRESET');
    proxy.set({ kind: 'latency', ms: 300 });
    const started = performance.now();
    expect(await get(proxy.port)).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    proxy.set({ kind: 'pass' });
    expect(await get(proxy.port)).toBe(200);
    expect(proxy.requests).toBe(5); // a refused connection never carries a request
    expect(proxy.refusedConnections).toBeGreaterThanOrEqual(1);
    expect(proxy.log.map((call) => [call.mode, call.forwarded, call.status])).toEqual([
      ['pass', true, 200],
      ['status', false, 503],
      ['blackhole', false, undefined],
      ['latency', true, 200],
      ['pass', true, 200],
    ]);
  });

  it('names Azure Blob calls in its log and counts them, and opens a timed window', async () => {
    const send = (method: string, path: string, headers: Record<string, string> = {}) =>
      new Promise<void>((resolve) => {
        const req = http.request({ host: '127.0.0.1', port: proxy.port, method, path, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve());
        });
        req.on('error', () => resolve());
        req.end();
      });
    const from = Date.now();
    await send('PUT', '/acct/c/b?comp=lease', { 'x-ms-lease-action': 'renew' });
    await send('HEAD', '/acct/c/b');
    await send('PUT', '/acct/c/b?comp=metadata');
    await send('PUT', '/acct/c?restype=container');
    await send('PUT', '/acct/c/b');
    expect(proxy.counts(from)).toEqual({ 'lease:renew': 1, read: 1, metadata: 1, container: 1, upload: 1 });

    const window = proxy.window({ kind: 'status', status: 500 }, 300);
    expect(await get(proxy.port)).toBe(500);
    const { from: opened, until } = await window;
    expect(until - opened).toBeGreaterThanOrEqual(290);
    expect(proxy.current).toEqual({ kind: 'pass' });
    expect(await get(proxy.port)).toBe(200);
  });
});
