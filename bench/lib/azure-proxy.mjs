// @ts-check
// A pass-through HTTP proxy in front of Azurite that counts requests by kind: what Azure would bill
// (every request these stores send is one "other operation"). Used by bench/experiments/azure-follower.mjs and
// bench/experiments/standby.mjs.
import http from 'node:http';

/**
 * A pass-through proxy that counts requests by kind: what Azure would bill (every request is one
 * "other operation" for these calls).
 * @param {number} target
 */
export async function countingProxy(target) {
  /** @type {Array<{ at: number, op: string }>} */
  const seen = [];
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const comp = url.searchParams.get('comp');
    const op =
      comp === 'lease'
        ? `lease:${req.headers['x-ms-lease-action']}`
        : (comp ?? (req.method === 'HEAD' ? 'properties' : String(req.method)));
    seen.push({ at: performance.now(), op });
    const upstream = http.request(
      { host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', () => done(undefined)));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    /** @param {number} from @param {number} until */
    counts(from, until) {
      /** @type {Record<string, number>} */
      const counts = {};
      for (const call of seen) if (call.at >= from && call.at < until) counts[call.op] = (counts[call.op] ?? 0) + 1;
      return counts;
    },
    close: () => {
      agent.destroy();
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done(undefined)));
    },
  };
}
