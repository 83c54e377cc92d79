import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FaultProxy } from '../support/fault-proxy.js';

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
  });
});
