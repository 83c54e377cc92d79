// Issue 16 chaos driver, shared by test/chaos/once-per-tick.spec.ts (a few handovers, in npm test)
// and bench/experiments/once-per-tick.ts (50, with figures): real processes of test/chaos/fixture/tick-app.ts
// over the machine's PostgreSQL, a 1-second once-per-tick cron job, replicas 500 ms apart on the
// wall clock, the leader stopped (SIGTERM) or killed (kill -9) 100 ms after one of its ticks. The
// kind is chosen per clock direction (ahead→behind, behind→ahead), so both kinds run both ways.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PostgresLeaseStore } from '../../lib/stores/postgres/postgres.store.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURE = join(ROOT, 'test/chaos/fixture/tick-app.ts');
const REGISTER = join(ROOT, 'test/support/swc-register.mjs');
export const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TICK_MS = 1_000;

export interface TickEntry {
  t: 'elected' | 'revoked' | 'run' | 'ckpt' | 'stale-write';
  id: string;
  /** The writer's (possibly offset) wall clock. */
  at: number;
  term?: number;
  fire?: number;
  /** The run's tick by its own clock, computed by the fixture without the library. */
  own?: number;
  seq?: number;
  ok?: boolean;
  raw?: string;
  service?: string;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** A bound for a race: does not keep the test process alive once the race is decided. */
const bound = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** One fixture process. */
class Replica {
  readonly exited: Promise<void>;
  readonly ready: Promise<void>;
  readonly output: string[] = [];

  constructor(
    readonly id: string,
    readonly offsetMs: number,
    readonly child: ChildProcessWithoutNullStreams,
  ) {
    let onReady: () => void = () => undefined;
    this.ready = new Promise((resolve) => {
      onReady = resolve;
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      this.output.push(line);
      if (line.startsWith('@@fx ') && line.includes('"ready"')) onReady();
    });
    createInterface({ input: child.stderr }).on('line', (line) => this.output.push(line));
    child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
  }
}

/** A cluster of fixture replicas sharing one table, election and ledger file. */
export class TickCluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'nle-ticks-'));
  readonly ledgerFile = join(this.dir, 'ledger.jsonl');
  readonly table = `tick_chaos_${randomBytes(4).toString('hex')}`;
  readonly election = `ticks-${randomBytes(3).toString('hex')}`;
  readonly replicas: Replica[] = [];

  constructor(private readonly env: Record<string, string>) {}

  async spawn(id: string, offsetMs: number): Promise<Replica> {
    const child = spawn(process.execPath, ['--enable-source-maps', '--import', REGISTER, FIXTURE], {
      cwd: ROOT,
      env: {
        ...process.env,
        NO_COLOR: '1',
        PG_URL,
        TABLE: this.table,
        ELECTION: this.election,
        IDENTITY: id,
        TICK_LEDGER: this.ledgerFile,
        CLOCK_OFFSET_MS: String(offsetMs),
        ...this.env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const replica = new Replica(id, offsetMs, child);
    this.replicas.push(replica);
    await Promise.race([
      replica.ready,
      replica.exited.then(() => {
        throw new Error(`${id} exited before it was ready:\n${replica.output.slice(-20).join('\n')}`);
      }),
      bound(30_000).then(() => {
        throw new Error(`${id} not ready after 30 s:\n${replica.output.slice(-20).join('\n')}`);
      }),
    ]);
    return replica;
  }

  ledger(): TickEntry[] {
    if (!existsSync(this.ledgerFile)) return [];
    return readFileSync(this.ledgerFile, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as TickEntry);
  }

  live(): Replica[] {
    return this.replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
  }

  /** The replica that holds the highest term elected so far (and is alive). */
  leader(): { replica: Replica; term: number } | undefined {
    const elected = this.ledger().filter((e) => e.t === 'elected');
    const last = elected.at(-1);
    const replica = last && this.live().find((r) => r.id === last.id);
    return replica && last?.term !== undefined ? { replica, term: last.term } : undefined;
  }

  async waitFor<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = probe();
      if (found !== undefined && found !== false) return found;
      if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await sleep(20);
    }
  }

  /** SIGTERM everyone still running, wait for the exits; then read the state left in the store. */
  async stop(): Promise<void> {
    for (const r of this.live()) r.child.kill('SIGTERM');
    await Promise.race([Promise.all(this.replicas.map((r) => r.exited)), bound(15_000)]);
    for (const r of this.live()) r.child.kill('SIGKILL');
  }

  async readState(key: string): Promise<unknown> {
    const store = new PostgresLeaseStore({ connection: PG_URL, table: this.table });
    try {
      return (await store.readState(this.election, { key, signal: AbortSignal.timeout(5_000) }))?.value;
    } finally {
      await store.close();
    }
  }

  async dispose(): Promise<void> {
    await this.stop();
    // A table per run: drop it, whatever happened.
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: PG_URL });
    try {
      await client.connect();
      await client.query(`DROP TABLE IF EXISTS ${this.table}`);
    } finally {
      await client.end().catch(() => undefined);
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

export type HandoverKind = 'SIGTERM' | 'SIGKILL';
/** From the replica whose clock is ahead to the one behind, or the other way. */
export type ClockDirection = 'ahead→behind' | 'behind→ahead';

export interface Handover {
  kind: HandoverKind;
  direction: ClockDirection;
  from: string;
  to: string;
  /** Signal to the new leader's `elected` entry, ms (real clock). */
  takeoverMs: number;
  /** The new leader's clock at its election: the most recent tick then is floor(at / 1 s). */
  electedAtLocal: number;
  /** Runs of that most recent tick, by anyone (catch-up: must be exactly 1). */
  lastTickRuns: number;
  /** Ticks between the old leader's last run and the new leader's first that nobody ran. */
  skippedTicks: number;
}

export interface TickReport {
  missed: 'skip' | 'catch-up';
  handovers: Handover[];
  runs: number;
  /** Fire times (as the library recorded them) run more than once (must be empty). */
  duplicates: Array<{ fire: number; runs: Array<{ id: string; term?: number }> }>;
  /** The same by each run's own-clock tick, independent of the library (must be empty). */
  ownDuplicates: Array<{ fire: number; runs: Array<{ id: string; term?: number }> }>;
  /** Runs whose library tick differs from their own-clock tick (a mapping to look at; not a failure). */
  fireMismatches: number;
  /** Runs whose tick could not be read back, or without an own-clock tick (must be 0). */
  unknownFire: number;
  ledgerFile: string;
}

/**
 * `handovers` times: wait for a tick of the leader, 100 ms later SIGTERM or kill -9 it, wait for the
 * successor's election, restart the stopped replica (same clock offset) as a follower, let the new
 * leader run a few ticks. The kind is the one run least so far in that clock direction (SIGTERM on a
 * tie; `tally`, shared across calls, keeps the balance over batches): leadership alternates between
 * the two replicas, so 4 handovers cover SIGTERM and kill -9 both ways.
 */
export async function runTickHandovers(options: {
  handovers: number;
  missed: 'skip' | 'catch-up';
  offsetsMs?: [number, number];
  tally?: Map<string, number>;
  /** false: the job is a plain @LeaderOnly() cron (the baseline without once-per-tick). */
  perTick?: boolean;
  onHandover?: (handover: Handover, index: number) => void;
}): Promise<TickReport & { cluster: TickCluster }> {
  const { handovers: count, missed, offsetsMs = [0, -500], tally = new Map<string, number>() } = options;
  const cluster = new TickCluster({ MISSED: missed, ONCE: options.perTick === false ? 'off' : 'per-tick' });
  const offsets = new Map([
    ['p1', offsetsMs[0]],
    ['p2', offsetsMs[1]],
  ]);
  const handovers: Handover[] = [];
  await cluster.spawn('p1', offsetsMs[0]);
  await cluster.spawn('p2', offsetsMs[1]);
  for (let i = 0; i < count; i++) {
    const { replica: leader, term } = await cluster.waitFor('a leader', () => cluster.leader(), 20_000);
    const runsBefore = cluster.ledger().filter((e) => e.t === 'run' && e.id === leader.id && e.term === term).length;
    await cluster.waitFor(
      `a tick of ${leader.id}`,
      () => cluster.ledger().filter((e) => e.t === 'run' && e.id === leader.id && e.term === term).length > runsBefore,
      5_000,
    );
    await sleep(100);
    const other = leader.id === 'p1' ? 'p2' : 'p1';
    const direction: ClockDirection =
      (offsets.get(leader.id) ?? 0) > (offsets.get(other) ?? 0) ? 'ahead→behind' : 'behind→ahead';
    const ran = (k: HandoverKind) => tally.get(`${k} ${direction}`) ?? 0;
    const kind: HandoverKind = ran('SIGTERM') <= ran('SIGKILL') ? 'SIGTERM' : 'SIGKILL';
    tally.set(`${kind} ${direction}`, ran(kind) + 1);
    const signalAt = Date.now();
    leader.child.kill(kind);
    const next = await cluster.waitFor(
      'the successor',
      () => cluster.ledger().find((e) => e.t === 'elected' && e.id !== leader.id && (e.term ?? 0) > term),
      20_000,
    );
    const takeoverMs = Date.now() - signalAt; // upper bound: the entry was seen this late
    await leader.exited;
    await cluster.spawn(leader.id, offsets.get(leader.id) ?? 0);
    // Let the new leader's own ticks (and its catch-up) run.
    await sleep(2_200);
    const handover: Handover = {
      kind,
      direction,
      from: leader.id,
      to: next.id,
      takeoverMs,
      electedAtLocal: next.at,
      lastTickRuns: 0,
      skippedTicks: 0,
    };
    handovers.push(handover);
  }
  await sleep(1_200);
  await cluster.stop();
  return { ...analyse(cluster.ledger(), handovers, missed), ledgerFile: cluster.ledgerFile, cluster };
}

function analyse(
  entries: TickEntry[],
  handovers: Handover[],
  missed: TickReport['missed'],
): Omit<TickReport, 'ledgerFile'> {
  const runs = entries.filter((e) => e.t === 'run');
  const byFire = new Map<number, TickEntry[]>();
  for (const run of runs) {
    if (typeof run.fire !== 'number') continue;
    byFire.set(run.fire, [...(byFire.get(run.fire) ?? []), run]);
  }
  const duplicates = runTwice(runs, 'fire');
  const ownDuplicates = runTwice(runs, 'own');
  for (const handover of handovers) {
    // The most recent tick by the new leader's clock — unless the old leader, its clock ahead (by
    // 500 ms here, + slack), already ran a later one: then that one is the most recent tick before the
    // election, and it is done (a later record makes the earlier tick count as done, by design).
    const fromRuns = runs.filter(
      (r) => r.id === handover.from && typeof r.fire === 'number' && r.fire <= handover.electedAtLocal + 600,
    );
    const lastTick = Math.max(
      Math.floor(handover.electedAtLocal / TICK_MS) * TICK_MS,
      ...fromRuns.map((r) => r.fire as number),
    );
    handover.lastTickRuns = byFire.get(lastTick)?.length ?? 0;
    const before = runs.filter((r) => r.id === handover.from && typeof r.fire === 'number' && r.fire <= lastTick);
    const after = runs.filter((r) => r.id === handover.to && typeof r.fire === 'number' && r.fire > lastTick);
    const from = Math.max(...before.map((r) => r.fire as number));
    const to = Math.min(...after.map((r) => r.fire as number));
    if (Number.isFinite(from) && Number.isFinite(to)) {
      let skipped = 0;
      for (let fire = from + TICK_MS; fire < to; fire += TICK_MS) if (!byFire.has(fire)) skipped += 1;
      handover.skippedTicks = skipped;
    }
  }
  return {
    missed,
    handovers,
    runs: runs.length,
    duplicates,
    ownDuplicates,
    fireMismatches: runs.filter((r) => typeof r.fire === 'number' && r.fire !== r.own).length,
    unknownFire: runs.filter((r) => typeof r.fire !== 'number' || typeof r.own !== 'number').length,
  };
}

/** Ticks run more than once, keyed by the library's recorded tick or by each run's own-clock tick. */
function runTwice(runs: TickEntry[], by: 'fire' | 'own'): TickReport['duplicates'] {
  const byTick = new Map<number, TickEntry[]>();
  for (const run of runs) {
    const tick = run[by];
    if (typeof tick === 'number') byTick.set(tick, [...(byTick.get(tick) ?? []), run]);
  }
  return [...byTick]
    .filter(([, list]) => list.length > 1)
    .map(([fire, list]) => ({ fire, runs: list.map((r) => ({ id: r.id, term: r.term })) }));
}
