// A child process for watch-redial-exit.spec.ts: an EtcdLeaseStore watching a key of a server the
// parent kills. Once told to, it closes the watch and the store, and then does nothing more: the
// process must exit by itself, however long etcd3's redials of the broken watch stream had grown.
import { EtcdLeaseStore } from '../../lib/stores/etcd/etcd.store.js';

const [endpoint, prefix] = process.argv.slice(2) as [string, string];
const store = new EtcdLeaseStore({ connection: endpoint, keyPrefix: prefix, callTimeoutMs: 1_000 });
const watch = store.watch('redial', () => undefined);
// The watch stream is open once a read went through the same client.
await store.read('redial', { signal: AbortSignal.timeout(5_000) });
process.stdout.write('watching\n');
process.stdin.setEncoding('utf8');
process.stdin.once('data', async () => {
  await watch.close();
  await store.close();
  process.stdout.write('closed\n');
  process.stdin.destroy();
});
