// One chaos scenario: an election with its own ledger, container blob and fixture processes.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AZURITE_ACCOUNT_KEY } from '../../setup/azurite.js';
import { FaultProxy } from '../../support/fault-proxy.js';
import {
  type ActingInterval,
  checkLedger,
  type LedgerEntry,
  type LedgerReport,
  readLedger,
  type SendEvidence,
} from '../../support/ledger.js';
import { connectionStringFor, EXIT_BOUND_MS, sleep, T } from './bounds.js';
import { leakedSecrets, type ScenarioSummary, summarize } from './checks.js';
import { Instance } from './instance.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const FIXTURE = join(ROOT, 'test/chaos/fixture/app.ts');
const REGISTER = join(ROOT, 'test/support/swc-register.mjs');

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
    this.finished = summarize(this, until);
    return this.finished;
  }

  /** Lines of any process output that contain a secret (the key, a connection string, a SAS signature). */
  leakedSecrets(): string[] {
    return leakedSecrets(this.instances, this.secrets);
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
