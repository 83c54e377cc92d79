// The demo as a newcomer runs it: `node scripts/demo.mjs` (what `npm start` runs after building)
// starts its own Azurite and three sample-app processes. Checked through what the user sees (the
// printed lines), what they can do (HTTP, kill -9, Ctrl+C) and what is left afterwards (nothing).
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSampleApp } from '../support/build-sample-app.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

// Azure leases last at least 15 s: a crash failover takes up to ~17 s, more on a loaded machine.
const FAILOVER_TIMEOUT_MS = 60_000;
const STARTUP_TIMEOUT_MS = 60_000;
const EXIT_TIMEOUT_MS = 60_000;
/** Longer than two cron periods (5 s): enough ticks to catch a second instance running the job. */
const OBSERVE_MS = 11_000;
/**
 * Spread: from "one instance leads all three" to "one each" takes two handovers, each the holder's
 * read turn (Azure: up to 4 renewals of 2.5 s) + a drain + a poll (~2 s); generous for a loaded machine.
 */
const SPREAD_TIMEOUT_MS = 30_000;
/** The tour's directed handover: 4 renew intervals (Azure's read turn) + one poll with jitter + 1 s of load. */
const DIRECTED_HANDOVER_BOUND_S = 4 * 2.5 + 2 * 1.15 + 1;
const ELECTIONS = ['reports', 'billing', 'cleanup'];
/** A follower's view catches up at its next poll (every 2 s ± 15 %); generous for a loaded machine. */
const POLL_CATCH_UP_MS = 10_000;

interface Line {
  text: string;
  at: number;
}

/** One run of the demo, in its own process group as a shell job is, so "Ctrl+C" reaches them all. */
class Demo {
  readonly lines: Line[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private readonly waiters = new Set<() => void>();
  private buffered = '';

  constructor(args: string[]) {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    // The demo must start its own Azurite, whatever the developer's shell has configured.
    delete env.AZURE_STORAGE_CONNECTION_STRING;
    delete env.AZURE_STORAGE_ACCOUNT_URL;
    delete env.ELECTION;
    delete env.ELECTIONS;
    this.child = spawn(process.execPath, ['scripts/demo.mjs', ...args], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      this.buffered += chunk.toString();
      const parts = this.buffered.split('\n');
      this.buffered = parts.pop() ?? '';
      for (const text of parts) this.lines.push({ text, at: Date.now() });
      for (const wake of this.waiters) wake();
    };
    this.child.stdout?.on('data', collect);
    this.child.stderr?.on('data', collect);
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    void this.exited.then(() => {
      for (const wake of this.waiters) wake();
    });
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** What a terminal's Ctrl+C does: SIGINT to every process of the foreground job. */
  interrupt(): void {
    process.kill(-this.pid, 'SIGINT');
  }

  /** Test cleanup only: whatever is still running in the group. */
  killGroup(): void {
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  matches(pattern: RegExp, from = 0): RegExpExecArray[] {
    return this.lines
      .slice(from)
      .map((line) => pattern.exec(line.text))
      .filter((match): match is RegExpExecArray => match !== null);
  }

  /** Waits for a line matching `pattern` (at index `from` or later); returns its match and index. */
  waitFor(pattern: RegExp, timeoutMs: number, from = 0): Promise<{ match: RegExpExecArray; index: number }> {
    return new Promise((resolve, reject) => {
      const check = () => {
        for (let index = from; index < this.lines.length; index++) {
          const match = pattern.exec(this.lines[index].text);
          if (match) return done(() => resolve({ match, index }));
        }
        if (!this.alive) done(() => reject(new Error(`demo exited before printing ${pattern}:\n${this.output()}`)));
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${this.output()}`))),
        timeoutMs,
      );
      const done = (settle: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        settle();
      };
      this.waiters.add(check);
      check();
    });
  }

  output(): string {
    return this.lines.map((line) => line.text).join('\n');
  }
}

const UP = /^\S+ (instance-\d)\s+up on http:\/\/localhost:(\d+) \(pid (\d+)\)/;
const AZURITE = /^\S+ azurite\s+blob service on http:\/\/127\.0\.0\.1:(\d+)\/\S+ \(pid (\d+)\)/;
/** The default election's job (its report counter lives in leader state). */
const CRON = /^\S+ (instance-\d)\s+⚙ reports: cron job ran: report #\d+, fencing term (\d+)/;
/** Any election's cron job. */
const ANY_CRON = /^\S+ (instance-\d)\s+⚙ (\w+): cron job ran: .*, fencing term (\d+)/;
const ELECTED = /^\S+ (instance-\d)\s+★ elected leader of (\w+), term (\d+)/;
/** The demo's line once spread has settled: `leaders: reports → instance-1, billing → …`. */
const LEADERS = /^\S+ demo\s+leaders: ((?:\w+ → instance-\d(?:, )?)+)(?: \(spread, ([\d.]+) s after the start\))?$/;

interface Instance {
  name: string;
  port: number;
  pid: number;
}

async function waitForCluster(
  demo: Demo,
  count: number,
): Promise<{ instances: Instance[]; azurite: { port: number; pid: number } }> {
  const azurite = (await demo.waitFor(AZURITE, STARTUP_TIMEOUT_MS)).match;
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (demo.matches(UP).length < count) {
    await demo.waitFor(UP, Math.max(1, deadline - Date.now()), demo.lines.length);
  }
  const instances = demo.matches(UP).map(([, name, port, pid]) => ({ name, port: Number(port), pid: Number(pid) }));
  return { instances, azurite: { port: Number(azurite[1]), pid: Number(azurite[2]) } };
}

/** Three consecutive ports nobody listens on. */
async function freePortBlock(size: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // Below the kernel's ephemeral range (32768+), where the demo's Azurite gets its port.
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    let free = true;
    for (let port = base; port < base + size && free; port++) free = await portFree(port);
    if (free) return base;
  }
  throw new Error('no block of free ports found');
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function expectNothingLeft(pids: number[], ports: number[]): Promise<void> {
  // Exit is reported by the demo after it reaped every child, so nothing should need a grace period;
  // a short one only absorbs the kernel freeing listening sockets.
  const deadline = Date.now() + 5_000;
  const leftovers = async () => ({
    processes: pids.filter(processExists),
    ports: (await Promise.all(ports.map(async (port) => ((await portFree(port)) ? null : port)))).filter(
      (p) => p !== null,
    ),
  });
  let left = await leftovers();
  while ((left.processes.length > 0 || left.ports.length > 0) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    left = await leftovers();
  }
  expect(left).toEqual({ processes: [], ports: [] });
}

/** Rejects after `ms`; the timer is cleared either way, so Jest is not kept waiting for it. */
async function withTimeout<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message())), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function post(
  port: number,
  path: string,
): Promise<{ status: number; leaderHeader: string | null; body: unknown }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, leaderHeader: response.headers.get('x-leader-id'), body: await response.json() };
}

/** `reports → instance-1, billing → instance-2` as a map. */
function assignment(text: string): Map<string, string> {
  return new Map(text.split(', ').map((pair) => pair.split(' → ') as [string, string]));
}

async function getJson(port: number, path: string): Promise<unknown> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) });
  return response.json();
}

async function postHandover(port: number, body: unknown): Promise<{ status: number; body: { message?: string } }> {
  const response = await fetch(`http://127.0.0.1:${port}/leader/handover`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: (await response.json()) as { message?: string } };
}

describe('demo (npm start)', () => {
  const demos: Demo[] = [];

  beforeAll(async () => {
    await buildSampleApp();
  }, 180_000);

  afterAll(() => {
    for (const demo of demos) demo.killGroup();
  });

  it('spreads three elections one per instance, each job on its leader only, fails over on kill -9, and stops cleanly on Ctrl+C', async () => {
    const basePort = await freePortBlock(3);
    const demo = new Demo(['--port', String(basePort)]);
    demos.push(demo);
    const { instances, azurite } = await waitForCluster(demo, 3);
    expect(instances.map((i) => i.port).sort()).toEqual([basePort, basePort + 1, basePort + 2]);
    // The introduction prints the status page's URL, and it serves the page.
    const pageUrl = (await demo.waitFor(/^\s+open (http:\/\/localhost:(\d+)\/)\s+live status page/, STARTUP_TIMEOUT_MS))
      .match;
    expect(instances.map((i) => i.port)).toContain(Number(pageUrl[2]));
    const page = await fetch(pageUrl[1].replace('localhost', '127.0.0.1'));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('<title>Leader election status</title>');

    // Spread: within a few retry intervals every instance leads exactly one election.
    const spread = await demo.waitFor(LEADERS, SPREAD_TIMEOUT_MS);
    const leaders = assignment(spread.match[1]);
    expect([...leaders.keys()]).toEqual(ELECTIONS);
    expect(new Set(leaders.values())).toEqual(new Set(instances.map((i) => i.name)));
    expect(spread.match[2]).toBeDefined();
    const leaderName = leaders.get('reports') as string;

    // From then on each election's job runs on its leader only, the report job always in one term.
    // Observed from the spread line on; the HTTP checks below run meanwhile.
    const observed = new Promise((resolve) => setTimeout(resolve, OBSERVE_MS));
    // Every instance knows every election's leader and where it listens (its `advertise`), as of
    // its last poll: a follower learns of the last move within one retry interval.
    const expected = ELECTIONS.map((election) => {
      const port = instances.find((i) => i.name === leaders.get(election))?.port;
      return [election, leaders.get(election), `http://127.0.0.1:${port}`];
    });
    const seen = async () => {
      const status = (await getJson(instances[0].port, '/leader')) as {
        elections: Array<{ election: string; leaderId: string; leaderAdvertise: string }>;
      };
      return status.elections.map((e) => [e.election, e.leaderId, e.leaderAdvertise]);
    };
    let view = await seen();
    for (const until = Date.now() + POLL_CATCH_UP_MS; JSON.stringify(view) !== JSON.stringify(expected); ) {
      if (Date.now() > until) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
      view = await seen();
    }
    expect(view).toEqual(expected);
    // Metrics are labelled per election: this instance leads exactly its one.
    const scrape = parsePrometheusText(await (await fetch(`http://127.0.0.1:${instances[0].port}/metrics`)).text());
    for (const election of ELECTIONS) {
      expect(sampleValue(scrape, 'leader_election_is_leader', { election, identity: instances[0].name })).toBe(
        leaders.get(election) === instances[0].name ? 1 : 0,
      );
    }
    // The handover endpoint refuses an election the app does not run, naming the ones it does.
    const unknown = await postHandover(instances[1].port, { election: 'payroll', to: instances[0].name });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/unknown election "payroll": this app runs "reports", "billing", "cleanup"/);

    await observed;
    // Two runs at least (usually there by now; a loaded machine may print the second late).
    const firstRun = await demo.waitFor(CRON, STARTUP_TIMEOUT_MS, spread.index);
    await demo.waitFor(CRON, STARTUP_TIMEOUT_MS, firstRun.index + 1);
    const runs = demo.matches(CRON, spread.index);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const firstTerm = Number(runs[0][2]);
    expect(new Set(runs.map((m) => `${m[1]} term ${m[2]}`))).toEqual(new Set([`${leaderName} term ${firstTerm}`]));
    const jobs = demo.matches(ANY_CRON, spread.index);
    // Cleanup runs every 15 s: not always inside the window.
    expect([...new Set(jobs.map((m) => m[2]))]).toEqual(expect.arrayContaining(['reports', 'billing']));
    for (const [, name, election] of jobs)
      expect(`${election} on ${name}`).toBe(`${election} on ${leaders.get(election)}`);
    // Balanced: no handover after the spread line.
    expect(demo.matches(ELECTED, spread.index)).toEqual([]);

    // The leader-only endpoint: 200 on the leader, 503 naming the leader on the two followers.
    const answers = await Promise.all(
      instances.map(async (i) => ({ name: i.name, ...(await post(i.port, '/jobs/run-now')) })),
    );
    expect(answers.filter((a) => a.status === 200).map((a) => a.name)).toEqual([leaderName]);
    expect(answers.find((a) => a.status === 200)?.body).toMatchObject({
      election: 'reports',
      ranBy: leaderName,
      term: firstTerm,
      trigger: 'http',
    });
    for (const follower of answers.filter((a) => a.name !== leaderName)) {
      expect(follower.status).toBe(503);
      expect(follower.leaderHeader).toBe(leaderName);
    }

    // kill -9 the leader: once its lease expires another instance takes the job, with a higher term.
    const leader = instances.find((i) => i.name === leaderName) as Instance;
    const killedAt = demo.lines.length;
    process.kill(leader.pid, 'SIGKILL');
    const successorRun = await demo.waitFor(
      new RegExp(
        `^\\S+ ((?!${leaderName}\\b)instance-\\d)\\s+⚙ reports: cron job ran: report #\\d+, fencing term (\\d+)`,
      ),
      FAILOVER_TIMEOUT_MS,
      killedAt,
    );
    const successor = successorRun.match[1];
    const newTerm = Number(successorRun.match[2]);
    // The report counter lives in leader state: the successor continues the numbering (issue 16).
    // The crashed leader may have saved one more report than it got to print before the kill.
    const reportOf = (text: string) => Number(/report #(\d+)/.exec(text)?.[1]);
    const lastBefore = Math.max(
      ...demo.lines
        .slice(0, killedAt)
        .filter((line) => /⚙ reports: (cron job|POST \/jobs\/run-now) ran: report #\d+/.test(line.text))
        .map((line) => reportOf(line.text)),
    );
    expect(reportOf(successorRun.match[0])).toBeGreaterThan(lastBefore);
    expect(reportOf(successorRun.match[0])).toBeLessThanOrEqual(lastBefore + 2);
    expect(newTerm).toBeGreaterThan(firstTerm);
    // Only the crashed instance's election moves; two instances for three elections is balanced.
    expect(demo.matches(ELECTED, killedAt).map((m) => `${m[2]} on ${m[1]}`)).toEqual([`reports on ${successor}`]);
    await new Promise((resolve) => setTimeout(resolve, OBSERVE_MS));
    const after = demo.matches(CRON, killedAt);
    expect(new Set(after.map((m) => `${m[1]} term ${m[2]}`))).toEqual(new Set([`${successor} term ${newTerm}`]));

    // Ctrl+C: the instances release and exit, then Azurite; exit code 0; no process, no port left.
    demo.interrupt();
    const exit = await withTimeout(
      demo.exited,
      EXIT_TIMEOUT_MS,
      () => `demo still running after Ctrl+C:\n${demo.output()}`,
    );
    expect(exit).toEqual({ code: 0, signal: null });
    expect(demo.output()).toMatch(
      new RegExp(`${successor}\\s+✗ no longer leader of reports \\(term ${newTerm}\\): stopped`),
    );
    expect(demo.output()).toContain('all processes stopped.');
    await expectNothingLeft(
      [demo.pid, azurite.pid, ...instances.map((i) => i.pid)],
      [azurite.port, ...instances.map((i) => i.port)],
    );
  }, 240_000);

  it('--tour hands an election over to a named instance, crashes the leader, stops its successor, prints the three times and exits 0', async () => {
    const basePort = await freePortBlock(3);
    const demo = new Demo(['--tour', '--port', String(basePort)]);
    demos.push(demo);
    const { instances, azurite } = await waitForCluster(demo, 3);
    const exit = await withTimeout(demo.exited, 180_000, () => `tour did not finish:\n${demo.output()}`);
    if (exit.code !== 0) throw new Error(`tour exited with ${exit.code}:\n${demo.output()}`);
    expect(exit).toEqual({ code: 0, signal: null });
    const output = demo.output();
    const directed = /directed handover \(POST → (instance-\d) leads (\w+)\)\s+([\d.]+) s/.exec(output);
    const failover = /crash failover \(kill -9 → new leader elected\)\s+([\d.]+) s/.exec(output);
    const handover = /graceful handover \(SIGTERM → new leader elected\)\s+([\d.]+) s/.exec(output);
    expect(directed).not.toBeNull();
    expect(failover).not.toBeNull();
    expect(handover).not.toBeNull();
    // A directed handover waits for the holder's next read of the request (Azure reads it every 4th
    // renewal, readEveryNthRenewal: up to 4 × 2.5 s) and one poll (~2 s ± 15 %), never for the lease
    // (a crash failover, below, waits for its 15 s).
    expect(Number(directed?.[3])).toBeLessThan(DIRECTED_HANDOVER_BOUND_S);
    // Generous bounds, but they tell the two apart: a crash waits for the 15 s lease to expire
    // (minus at most one 2.5 s renew interval); a graceful stop releases it at once.
    expect(Number(failover?.[1])).toBeGreaterThan(10);
    expect(Number(failover?.[1])).toBeLessThan(45);
    expect(Number(handover?.[1])).toBeLessThan(10);
    // The named instance, and nobody else, took the election after the request.
    const [, target, election] = directed as RegExpExecArray;
    const asked = demo.lines.findIndex((line) => / tour\s+1\/3 ask /.test(line.text));
    const moved = demo.matches(ELECTED, asked).find((m) => m[2] === election);
    expect(moved?.[1]).toBe(target);
    // Per election, terms only grow; the default one had at least three (start, crash, stop).
    const terms = new Map<string, number[]>();
    for (const [, , name, term] of demo.matches(ELECTED)) terms.set(name, [...(terms.get(name) ?? []), Number(term)]);
    for (const list of terms.values()) {
      expect(list).toEqual([...list].sort((a, b) => a - b));
      expect(new Set(list).size).toBe(list.length);
    }
    expect(terms.get('reports')?.length).toBeGreaterThanOrEqual(3);
    await expectNothingLeft(
      [demo.pid, azurite.pid, ...instances.map((i) => i.pid)],
      [azurite.port, ...instances.map((i) => i.port)],
    );
  }, 240_000);
});
