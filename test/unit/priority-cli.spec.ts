// Issue #28, the preferred leader in `leaderlease status`: the holder's priority, in --json always
// (0 for a holder that publishes none, null while free), and as a PRIORITY column once any holder
// publishes one (a cluster without priorities sees the table as before: cli.spec.ts).
import { ExitCode } from '../../lib/cli/cli-errors.js';
import { runCli } from '../../lib/cli/main.js';
import type { StatusDocument } from '../../lib/cli/status.command.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';

const signal = () => AbortSignal.timeout(5_000);

async function status(store: InMemoryLeaseStore, ...argv: string[]): Promise<{ code: number; stdout: string }> {
  const stdout: string[] = [];
  const code = await runCli(['status', ...argv], {
    output: { out: (text) => stdout.push(text), err: () => undefined },
    requestedBy: 'cli:tester@test-host',
    env: { LEADER_ELECTION_STORE: 'postgres', LEADER_ELECTION_CONNECTION: 'postgres://u:p@127.0.0.1:1/db' },
    buildStore: async () => store,
  });
  return { code, stdout: stdout.join('\n') };
}

async function lead(store: InMemoryLeaseStore, election: string, identity: string, meta?: object): Promise<void> {
  const result = await store.acquire({ election, identity, leaseDurationMs: 60_000, meta, signal: signal() });
  if (!result.acquired) throw new Error(`${identity} could not take ${election}`);
}

describe('CLI status: the holder’s priority', () => {
  it('a PRIORITY column once a holder publishes one; a holder without counts as 0, a free election shows -', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a', { priority: 10 });
    await lead(store, 'reports', 'pod-b', { leaderships: 1 });
    const run = await status(store, '--election', 'billing', '--election', 'reports', '--election', 'idle');
    expect(run.code).toBe(ExitCode.ok);
    const [header, billing, reports, idle] = run.stdout.split('\n').map((line) => line.split(/\s{2,}/));
    expect(header).toEqual(['ELECTION', 'STATE', 'HOLDER', 'TERM', 'ADVERTISE', 'LEADS', 'PRIORITY', 'HANDOVER']);
    expect(billing).toEqual(['billing', 'held', 'pod-a', '1', '-', '-', '10', '-']);
    expect(reports).toEqual(['reports', 'held', 'pod-b', '1', '-', '1', '0', '-']);
    expect(idle).toEqual(['idle', 'free', '-', '0', '-', '-', '-', '-']);
  });

  it('--json: priority on every row (0 without the field, null while free)', async () => {
    const store = new InMemoryLeaseStore();
    await lead(store, 'billing', 'pod-a', { priority: -3 });
    await lead(store, 'reports', 'pod-b');
    const run = await status(store, '--json', '--election', 'billing', '--election', 'reports', '--election', 'idle');
    const { elections } = JSON.parse(run.stdout) as StatusDocument;
    expect(elections.map((row) => [row.election, row.priority])).toEqual([
      ['billing', -3],
      ['reports', 0],
      ['idle', null],
    ]);
    expect(elections[0]?.meta).toEqual({ priority: -3 });
  });
});
