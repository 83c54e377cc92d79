// The chaos harness: real fixture processes (test/chaos/fixture/app.ts), each talking to Azurite
// through its own FaultProxy, all writing one ledger that the checker reads afterwards.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { AZURITE_ACCOUNT, AZURITE_ACCOUNT_KEY } from '../setup/azurite.js';
import { FaultProxy } from '../support/fault-proxy.js';
import {
  type ActingInterval,
  type ContentionWindow,
  checkContention,
  checkLedger,
  type LedgerEntry,
  type LedgerReport,
  readLedger,
  type SendEvidence,
} from '../support/ledger.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURE = join(ROOT, 'test/chaos/fixture/app.ts');
const REGISTER = join(ROOT, 'test/support/swc-register.mjs');

/** The fixture's election timings (Azure's minimum lease). */
export const T = {
  leaseMs: 15_000,
  renewDeadlineMs: 10_000,
  renewIntervalMs: 2_000,
  retryMs: 1_000,
  shutdownTimeoutMs: 5_000,
} as const;
/** The elector's polling jitter (±15 %). */
export const RETRY_MAX_MS = T.retryMs * 1.15;
/** A loaded 2-core machine running several scenarios at once: bounds are generous on purpose. */
export const SLACK_MS = 5_000;
/** Crash failover: the lease must expire, then a follower's next poll wins. */
export const FAILOVER_BOUND_MS = T.leaseMs + RETRY_MAX_MS + SLACK_MS;
/** Graceful handover: the lease was released, so a follower's next poll wins. */
export const HANDOVER_BOUND_MS = RETRY_MAX_MS + 2_500;
/** A process must be gone this long after SIGTERM / `close` (drain ≤ shutdownTimeout + 1 s grace). */
export const EXIT_BOUND_MS = 15_000;
/**
 * Longest silence allowed between two store calls of a running instance: a renew may hang until
 * the deadline (10 s), then the follower polls again within a retry interval.
 */
export const CONTENTION_SILENCE_MS = T.renewDeadlineMs + RETRY_MAX_MS + 4_000;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Where the global setup's Azurite is (or one started for this file when run without it). */
export async function sharedAzurite(): Promise<{ port: number; stop(): Promise<void> }> {
  const port = Number(process.env.AZURITE_BLOB_PORT);
  if (port > 0) return { port, stop: async () => undefined };
  const { startAzurite } = await import('../setup/azurite.js');
  const azurite = await startAzurite();
  return { port: azurite.port, stop: () => azurite.stop() };
}

/** An account connection string whose blob endpoint is `port` on loopback (a proxy, or nothing). */
export function connectionStringFor(port: number, key = AZURITE_ACCOUNT_KEY): string {
  return `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${key};BlobEndpoint=http://127.0.0.1:${port}/${AZURITE_ACCOUNT};`;
}

interface FxEvent {
  type: string;
  id: string;
  at: number;
  [key: string]: unknown;
}

export interface OutputLine {
  stream: 'stdout' | 'stderr';
  at: number;
  text: string;
}

export interface SpawnOptions {
  /** Extra or overriding environment for the fixture (e.g. LONG_JOB_MS, bad options). */
  env?: Record<string, string>;
  /** The connection string the fixture gets; default: through this instance's own proxy. */
  connectionString?: (proxyPort: number) => string;
  /** No proxy in front (e.g. an unreachable endpoint): store calls are not counted. */
  noProxy?: boolean;
  /** Another fixture than fixture/app.ts (same environment contract), e.g. fixture/elections-app.ts. */
  fixture?: string;
}

/** One fixture process and its fault proxy. */
export class Instance {
  readonly output: OutputLine[] = [];
  readonly events: FxEvent[] = [];
  readonly signals: Array<{ signal: NodeJS.Signals | 'close'; at: number }> = [];
  exit?: { code: number | null; signal: NodeJS.Signals | null; at: number };
  readonly exited: Promise<void>;
  readonly spawnedAt = Date.now();

  constructor(
    readonly id: string,
    readonly child: ChildProcessWithoutNullStreams,
    readonly proxy: FaultProxy | undefined,
    /** Its timing, for the independent ledger. */
    readonly renewDeadlineMs: number = T.renewDeadlineMs,
  ) {
    const collect = (stream: OutputLine['stream']) => (text: string) => {
      this.output.push({ stream, at: Date.now(), text });
      if (stream === 'stdout' && text.startsWith('@@fx ')) {
        try {
          this.events.push(JSON.parse(text.slice(5)) as FxEvent);
        } catch {
          // a torn line: kept in `output` anyway
        }
      }
    };
    createInterface({ input: child.stdout }).on('line', collect('stdout'));
    createInterface({ input: child.stderr }).on('line', collect('stderr'));
    child.stdin.on('error', () => undefined);
    // 'close' (not 'exit'): the process has ended and all its output has been read.
    this.exited = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        this.exit = { code, signal, at: Date.now() };
        resolve();
      }),
    );
  }

  event(type: string): FxEvent | undefined {
    return this.events.find((e) => e.type === type);
  }

  get port(): number | undefined {
    return this.event('ready')?.port as number | undefined;
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  /** Stopped by SIGSTOP and not continued since. */
  get paused(): boolean {
    const last = this.signals.filter((s) => s.signal === 'SIGSTOP' || s.signal === 'SIGCONT').at(-1);
    return last?.signal === 'SIGSTOP';
  }

  signal(signal: NodeJS.Signals): number {
    const at = Date.now();
    this.signals.push({ signal, at });
    this.child.kill(signal);
    return at;
  }

  /**
   * SIGSTOP, then wait until the kernel shows the process stopped. `sentAt` is when the signal was
   * sent (failover is measured from it); `frozenAt` is a moment the process was certainly stopped:
   * a ledger stamp taken before the stop is ≤ `frozenAt`, so anything stamped later was done after
   * a resume. (Between `sentAt` and delivery the child still runs and may stamp the same
   * millisecond, or the next: about 1 run in 10 with a 5 ms stamper.)
   */
  async freeze(): Promise<{ sentAt: number; frozenAt: number }> {
    const sentAt = this.signal('SIGSTOP');
    const until = Date.now() + 5_000;
    // /proc/<pid>/stat: "pid (comm) S ...", the state letter after the last ')'.
    const state = () => {
      const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    };
    while (state() !== 'T') {
      if (Date.now() > until) throw new Error(`${this.id} did not stop within 5 s of SIGSTOP`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { sentAt, frozenAt: Date.now() };
  }

  send(line: string): void {
    if (line === 'close') this.signals.push({ signal: 'close', at: Date.now() });
    this.child.stdin.write(`${line}\n`);
  }

  /** GET on the fixture's HTTP port: `/health` (terminus) or `/status`. */
  async get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`http://127.0.0.1:${this.port}${path}`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** When this instance had to keep calling the store: from ready until stopped, paused, killed or `until`. */
  contentionWindows(until: number): ContentionWindow[] {
    const ready = this.event('ready');
    if (!ready || !this.proxy) return [];
    const windows: ContentionWindow[] = [];
    let from: number | undefined = ready.at;
    const end = Math.min(until, this.exit?.at ?? until);
    for (const { signal, at } of this.signals) {
      if (signal === 'SIGCONT') {
        from ??= at;
      } else if (from !== undefined) {
        windows.push({ id: this.id, from, until: Math.min(at, end) });
        from = undefined;
      }
    }
    if (from !== undefined) windows.push({ id: this.id, from, until: end });
    return windows;
  }

  tail(lines = 15): string {
    return this.output
      .slice(-lines)
      .map((l) => `    ${this.id} ${l.stream}: ${l.text}`)
      .join('\n');
  }
}

export interface ScenarioSummary {
  report: LedgerReport;
  violations: string[];
  storeCalls: number;
  steps: number;
  terms: number;
}

/**
 * One election with its own ledger, container blob and processes. `finish()` shuts everything down
 * and runs every check; the spec asserts its scenario-specific bounds on top.
 */
export class Scenario {
  readonly dir: string;
  readonly ledgerFile: string;
  readonly election: string;
  readonly container = 'chaos';
  readonly instances: Instance[] = [];
  /** Strings that must never appear in any process output. */
  readonly secrets: string[] = [AZURITE_ACCOUNT_KEY];
  /** Extra violations found by the scenario while running (e.g. a process that did not exit). */
  readonly violations: string[] = [];
  readonly startedAt = Date.now();
  private finished?: ScenarioSummary;

  constructor(
    readonly name: string,
    /** The Azurite blob port proxies forward to. */
    private readonly storePort: number,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), `chaos-${name}-`));
    this.ledgerFile = join(this.dir, 'ledger.jsonl');
    this.election = `chaos-${name}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  }

  async spawn(id: string, options: SpawnOptions = {}): Promise<Instance> {
    const proxy = options.noProxy ? undefined : await FaultProxy.start(this.storePort);
    const connectionString = (options.connectionString ?? ((port) => connectionStringFor(port)))(proxy?.port ?? 0);
    this.secrets.push(connectionString);
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      // The fixture gets its store only from CONNECTION_STRING.
      if (value !== undefined && !key.startsWith('AZURITE_')) env[key] = value;
    }
    Object.assign(env, {
      NO_COLOR: '1',
      FORCE_COLOR: '0',
      CONNECTION_STRING: connectionString,
      CONTAINER: this.container,
      ELECTION: this.election,
      IDENTITY: id,
      LEDGER_FILE: this.ledgerFile,
      LEASE_MS: String(T.leaseMs),
      RENEW_DEADLINE_MS: String(T.renewDeadlineMs),
      RENEW_INTERVAL_MS: String(T.renewIntervalMs),
      RETRY_MS: String(T.retryMs),
      SHUTDOWN_TIMEOUT_MS: String(T.shutdownTimeoutMs),
      ...options.env,
    });
    const child = spawn(process.execPath, ['--enable-source-maps', '--import', REGISTER, options.fixture ?? FIXTURE], {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const instance = new Instance(id, child, proxy, Number(env.RENEW_DEADLINE_MS));
    this.instances.push(instance);
    return instance;
  }

  /** Spawns `count` instances (`<prefix>1`…) and waits until all are ready. */
  async start(count: number, options: SpawnOptions = {}, prefix = 'p'): Promise<Instance[]> {
    const group: Instance[] = [];
    for (let i = 1; i <= count; i++) group.push(await this.spawn(`${prefix}${i}`, options));
    await this.waitFor(`${count} instances ready`, () => group.every((p) => p.event('ready')), 90_000);
    return group;
  }

  instance(id: string): Instance {
    const found = this.instances.find((i) => i.id === id);
    if (!found) throw new Error(`no instance ${id}`);
    return found;
  }

  ledger(): LedgerEntry[] {
    return readLedger(this.ledgerFile);
  }

  check(now = Date.now()): LedgerReport {
    return checkLedger(this.ledger(), now, this.evidence());
  }

  /**
   * The proxies' logs of acquire/renew requests: acting intervals end by them, not by what the
   * electors claim (an elector overstating its deadline would move a claim-based bound with it).
   */
  evidence(): SendEvidence {
    const proxied = this.instances.filter((i) => i.proxy);
    return {
      renewDeadlineMs: new Map(proxied.map((i) => [i.id, i.renewDeadlineMs])),
      // The fixtures use no blob prefix: the blob is the election, matched against the ledger's.
      sends: proxied.flatMap((i) =>
        (i.proxy as FaultProxy).leaseSends().map(({ blob, ...send }) => ({ ...send, id: i.id, election: blob })),
      ),
    };
  }

  /** The acting intervals right now (more than one of an election would be a violation); of `election` when given. */
  acting(now = Date.now(), election?: string): ActingInterval[] {
    return this.check(now).intervals.filter((i) => i.end >= now && (election === undefined || i.election === election));
  }

  terms(): Array<Extract<LedgerEntry, { t: 'term' }>> {
    return this.ledger().filter((e): e is Extract<LedgerEntry, { t: 'term' }> => e.t === 'term');
  }

  /** Polls `probe` until it returns something truthy; fails with the processes' last output. */
  async waitFor<T>(what: string, probe: () => T | undefined | false | null, timeoutMs: number): Promise<T> {
    const start = Date.now();
    for (;;) {
      const value = probe();
      if (value) return value;
      if (Date.now() - start > timeoutMs) {
        throw new Error(
          `[${this.name}] timed out after ${timeoutMs} ms waiting for ${what}\n${this.instances.map((i) => i.tail()).join('\n')}`,
        );
      }
      await sleep(100);
    }
  }

  /** Polls GET `path` on `instance` until `accept` holds; returns the last answer. */
  async waitForHttp(
    instance: Instance,
    path: string,
    what: string,
    accept: (res: { status: number; body: Record<string, unknown> }) => boolean,
    timeoutMs: number,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const start = Date.now();
    let last: { status: number; body: Record<string, unknown> } | undefined;
    for (;;) {
      try {
        last = await instance.get(path);
        if (accept(last)) return last;
      } catch (error) {
        last = { status: 0, body: { error: String(error) } };
      }
      if (Date.now() - start > timeoutMs) {
        throw new Error(
          `[${this.name}] timed out after ${timeoutMs} ms waiting for ${what}; last ${path}: ${JSON.stringify(last)}\n${instance.tail()}`,
        );
      }
      await sleep(250);
    }
  }

  /** Waits for a term started after `after` (by anyone but `excluding`) and returns it. */
  waitForTerm(what: string, after: number, timeoutMs: number, excluding?: string) {
    return this.waitFor(what, () => this.terms().find((t) => t.at > after && t.id !== excluding), timeoutMs);
  }

  /** Waits until exactly one instance acts as leader, and returns its interval. */
  waitForLeader(timeoutMs = 30_000): Promise<ActingInterval> {
    return this.waitFor(
      'a leader',
      () => {
        const acting = this.acting();
        return acting.length === 1 ? acting[0] : undefined;
      },
      timeoutMs,
    );
  }

  /** SIGTERM and wait for the exit; a process still there after {@link EXIT_BOUND_MS} is a violation. */
  async terminate(instance: Instance): Promise<number> {
    const at = instance.signal('SIGTERM');
    await this.awaitExit(instance, 'SIGTERM');
    return at;
  }

  private async awaitExit(instance: Instance, after: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([instance.exited, new Promise((resolve) => (timer = setTimeout(resolve, EXIT_BOUND_MS)))]);
    clearTimeout(timer);
    if (instance.alive) {
      this.violations.push(`${instance.id} did not exit within ${EXIT_BOUND_MS} ms after ${after}`);
      instance.child.kill('SIGKILL');
      await instance.exited;
    }
  }

  /** Every proxy's calls, tagged with the instance. */
  calls(): Array<{ id: string; at: number; op: string; mode: string; forwarded: boolean; status?: number }> {
    return this.instances.flatMap((i) => (i.proxy ? i.proxy.log.map((call) => ({ ...call, id: i.id })) : []));
  }

  /**
   * Closes what still runs (`close` on stdin: app.close(), then the process must exit by itself),
   * closes the proxies and runs every check: ledger (overlap, terms, leader-only work inside the
   * acting interval, unhandled errors), contention, exits, secrets in the output.
   */
  async finish(): Promise<ScenarioSummary> {
    if (this.finished) return this.finished;
    const until = Date.now();
    await Promise.all(
      this.instances
        .filter((i) => i.alive)
        .map(async (i) => {
          if (i.paused) i.signal('SIGCONT');
          i.send('close');
          await this.awaitExit(i, 'close');
          if (i.exit && i.exit.code !== 0)
            this.violations.push(`${i.id} exited with ${i.exit.code ?? i.exit.signal} after close`);
          // It ended on its own once app.close() had resolved: no timer or socket left behind.
          if (i.exit?.code === 0 && !i.event('closed'))
            this.violations.push(`${i.id} exited before app.close() resolved`);
        }),
    );
    for (const i of this.instances) await i.proxy?.close();
    const violations = [...this.violations];
    const entries = this.ledger();
    const report = checkLedger(entries, Date.now(), this.evidence());
    violations.push(...report.violations);
    violations.push(
      ...checkContention(
        this.calls(),
        this.instances.flatMap((i) => i.contentionWindows(until)),
        CONTENTION_SILENCE_MS,
      ),
    );
    // Every term that lasted a while ran both kinds of leader-only work (proves the checks saw work).
    for (const interval of report.intervals) {
      if (interval.end - interval.start < 3_000) continue;
      for (const job of ['tick', 'pump']) {
        const ran = entries.some(
          (e) =>
            e.t === 'step' &&
            e.job === job &&
            e.id === interval.id &&
            e.term === interval.term &&
            e.election === interval.election,
        );
        if (!ran)
          violations.push(
            `${interval.id} term ${interval.term}${interval.election === undefined ? '' : ` of ${interval.election}`} ` +
              `led ${interval.end - interval.start} ms without a ${job} step`,
          );
      }
    }
    // Processes that ended on their own, other than the ones we stopped or whose startup must fail.
    for (const i of this.instances) {
      if (i.exit && i.signals.length === 0 && !i.event('startup-failed')) {
        violations.push(`${i.id} exited unexpectedly (${i.exit.code ?? i.exit.signal})\n${i.tail()}`);
      }
    }
    violations.push(...this.leakedSecrets());
    this.finished = {
      report,
      violations,
      storeCalls: this.instances.reduce((sum, i) => sum + (i.proxy?.requests ?? 0), 0),
      steps: entries.filter((e) => e.t === 'step').length,
      terms: report.intervals.length,
    };
    return this.finished;
  }

  /** Lines of any process output that contain a secret (the key, a connection string, a SAS signature). */
  leakedSecrets(): string[] {
    const needles = [...new Set(this.secrets.flatMap((s) => [s, encodeURIComponent(s)]))].filter((s) => s.length >= 8);
    const leaks: string[] = [];
    for (const i of this.instances) {
      for (const line of i.output) {
        if (needles.some((needle) => line.text.includes(needle))) {
          leaks.push(`${i.id} printed a secret on ${line.stream}: ${line.text.slice(0, 80)}…`);
        }
      }
    }
    return leaks;
  }

  /** Removes the scenario's temp folder (ledger), keeping it when the test failed for inspection. */
  cleanup(keep: boolean): void {
    if (!keep) rmSync(this.dir, { recursive: true, force: true });
  }

  /** All output, for scenarios that grep it. */
  outputOf(instance: Instance): string {
    return instance.output.map((l) => l.text).join('\n');
  }
}

// ---- the per-scenario table -----------------------------------------------------------------------

export interface ResultRow {
  scenario: string;
  /** What was measured, e.g. "kill -9 → new leader". */
  measure: string;
  /** e.g. "15069 ms", "0 changes". */
  value: string;
  bound: string;
  overlaps: number;
  terms: number;
  storeCalls: number;
  steps: number;
  wallS: number;
}

/** `1234 ms` for a number of milliseconds. */
export const ms = (value: number) => `${Math.round(value)} ms`;

const RESULTS_DIR = join(tmpdir(), 'nestjs-leader-election-chaos');

/** Collects a spec file's rows; `flush()` prints its table and rewrites the run's summary. */
export class Results {
  readonly rows: ResultRow[] = [];

  constructor(private readonly file: string) {}

  add(row: ResultRow): void {
    this.rows.push(row);
  }

  /** A row from a finished scenario. */
  from(scenario: Scenario, summary: ScenarioSummary, measure: string, value: string, bound: string): void {
    this.add({
      scenario: scenario.name,
      measure,
      value,
      bound,
      overlaps: summary.report.violations.filter((v) => v.startsWith('overlap')).length,
      terms: summary.terms,
      storeCalls: summary.storeCalls,
      steps: summary.steps,
      wallS: Math.round((Date.now() - scenario.startedAt) / 1000),
    });
  }

  flush(): void {
    if (this.rows.length === 0) return;
    mkdirSync(RESULTS_DIR, { recursive: true });
    const rows = [...this.rows].sort((a, b) => a.scenario.localeCompare(b.scenario));
    writeFileSync(
      join(RESULTS_DIR, `${this.file}.json`),
      JSON.stringify({ at: new Date().toISOString(), rows }, null, 2),
    );
    const all = readdirSync(RESULTS_DIR)
      .filter((f) => f.endsWith('.json'))
      .flatMap((f) => (JSON.parse(readFileSync(join(RESULTS_DIR, f), 'utf8')) as { rows: ResultRow[] }).rows)
      .sort((a, b) => a.scenario.localeCompare(b.scenario, undefined, { numeric: true }));
    writeFileSync(join(RESULTS_DIR, 'latest.md'), `${table(all)}\n`);
    console.log(
      `${table(rows)}\n\nchaos results: ${join(RESULTS_DIR, `${this.file}.json`)} (all files: ${join(RESULTS_DIR, 'latest.md')})`,
    );
  }
}

export function table(rows: ResultRow[]): string {
  const lines = [
    '| scenario | measured | value | bound | overlaps | terms | store calls | leader-only steps | wall |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.measure} | ${r.value} | ${r.bound} | ${r.overlaps} | ${r.terms} | ${r.storeCalls} | ${r.steps} | ${r.wallS} s |`,
    ),
  ];
  return lines.join('\n');
}
