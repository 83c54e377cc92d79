// A closed etcd store lets the process exit even after its server was gone for a while (found by
// the majority-loss chaos scenario, issue #30: replicas took > 15 s to exit after app.close()).
// etcd3 redials a broken watch stream on a plain timer that its client's close() never clears, and
// its default back-off grows to 30 s; the store's own back-off (etcd-watch-backoff.ts) is capped at
// 2 s and drops to 0 once the store is closed.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { type EtcdCluster, startEtcdCluster } from '../../scripts/lib/etcd.mjs';

const ROOT = process.cwd();
const REGISTER = join(ROOT, 'test/support/swc-register.mjs');
const CHILD = join(ROOT, 'test/conformance/watch-redial-exit.child.ts');
/** After 'closed' the process must be gone within this: socket teardown on a loaded machine. */
const EXIT_WITHIN_MS = 3_000;
/** Long enough for etcd3's default back-off to grow past EXIT_WITHIN_MS (it doubles from ~128 ms). */
const SERVER_GONE_MS = 12_000;

let cluster: EtcdCluster | undefined;

afterAll(async () => {
  await cluster?.stop();
});

it('exits within 3 s of closing the store after its watch stream redialled a dead server for 12 s', async () => {
  cluster = await startEtcdCluster({ size: 1 });
  const [member] = cluster.members;
  const child = spawn(
    process.execPath,
    ['--import', REGISTER, CHILD, cluster.endpoints[0] as string, `redial-${randomBytes(4).toString('hex')}/`],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let output = '';
  let closedAt: number | undefined;
  const seen = (text: string) =>
    new Promise<void>((resolve) => {
      const check = () => (output.includes(text) ? resolve() : setTimeout(check, 20));
      check();
    });
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    if (closedAt === undefined && output.includes('closed\n')) closedAt = performance.now();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number>((resolve) => child.on('exit', () => resolve(performance.now())));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    await seen('watching\n');
    await cluster.kill(member as NonNullable<typeof member>);
    await new Promise((resolve) => setTimeout(resolve, SERVER_GONE_MS));
    child.stdin.write('close\n');
    await seen('closed\n');
    const exitAt = await exited;
    expect(exitAt - (closedAt as number)).toBeLessThanOrEqual(EXIT_WITHIN_MS);
  } finally {
    clearTimeout(killer);
    child.kill('SIGKILL');
  }
}, 90_000);
