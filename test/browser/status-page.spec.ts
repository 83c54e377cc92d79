// The sample app's live status page in a real headless Chromium (Debian's `chromium`, driven by
// playwright-core): two real sample-app processes elect over Azurite; after kill -9 of the leader,
// the survivor's page — opened before the kill and never reloaded — names the new leader within
// lease + retry + 2 s. A screenshot is kept under test-artifacts/ (or $TEST_ARTIFACTS_DIR).
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { buildSampleApp } from '../support/build-sample-app.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = process.env.TEST_ARTIFACTS_DIR ?? join(ROOT, 'test-artifacts');

// The sample app's defaults (Azure's shortest lease, the default retry interval).
const LEASE_MS = 15_000;
const RETRY_MS = 2_000;
const PAGE_BOUND_MS = LEASE_MS + RETRY_MS + 2_000;

const inCI = process.env.CI === 'true';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && !inCI) {
  console.warn(`status page browser test skipped: ${CHROMIUM} not found (apt-get install -y chromium)`);
}
// In CI a missing browser is a failure, never a silent skip.
const describeBrowser = haveChromium || inCI ? describe : describe.skip;

interface Replica {
  id: string;
  port: number;
  child: ChildProcessWithoutNullStreams;
  output: string[];
  exited: Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startReplica(id: string, election: string): Promise<Replica> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AZURE_STORAGE_CONNECTION_STRING: process.env.AZURITE_CONNECTION_STRING,
    ELECTION: election,
    INSTANCE_ID: id,
    PORT: String(port),
    LOG_FORMAT: 'json',
    NO_COLOR: '1',
  };
  delete env.AZURE_STORAGE_ACCOUNT_URL;
  const child = spawn(process.execPath, [join(ROOT, 'sample-app/dist/main.js')], { cwd: ROOT, env });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const listening = new Promise<void>((resolve, reject) => {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        output.push(line);
        if (line.includes('"event":"listening"')) resolve();
      });
    }
    void exited.then(() => reject(new Error(`${id} exited before listening:\n${output.join('\n')}`)));
  });
  await withTimeout(listening, 60_000, `${id} to listen`);
  return { id, port, child, output, exited };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function leaderOf(replica: Replica): Promise<{ isLeader: boolean; leaderId: string | null }> {
  const res = await fetch(`http://127.0.0.1:${replica.port}/leader`, { signal: AbortSignal.timeout(5_000) });
  return (await res.json()) as { isLeader: boolean; leaderId: string | null };
}

describeBrowser('status page in headless Chromium', () => {
  const replicas: Replica[] = [];
  let context: BrowserContext | undefined;
  let userDataDir: string | undefined;

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`CI=true but ${CHROMIUM} is missing: .ci/run must install Debian's chromium`);
    await buildSampleApp();
  }, 180_000);

  afterAll(async () => {
    await context?.close();
    for (const replica of replicas) replica.child.kill('SIGKILL');
    await Promise.all(replicas.map((replica) => replica.exited));
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  it('shows the new leader after kill -9 of the old one, live over SSE, without a reload', async () => {
    const election = `status-page-${process.pid}-${Date.now()}`;
    const first = await startReplica('replica-1', election);
    replicas.push(first);
    const firstStatus = await leaderOf(first);
    expect(firstStatus).toMatchObject({ isLeader: true, leaderId: 'replica-1' });
    const second = await startReplica('replica-2', election);
    replicas.push(second);
    expect(await leaderOf(second)).toMatchObject({ isLeader: false, leaderId: 'replica-1' });

    userDataDir = await mkdtemp(join(tmpdir(), 'status-page-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const page = context.pages()[0] ?? (await context.newPage());
    const response = await page.goto(`http://127.0.0.1:${second.port}/`);
    expect(response?.status()).toBe(200);
    expect(await page.title()).toBe('Leader election status');
    // Reachable by role and name, as assistive technology finds it.
    await page.getByRole('heading', { level: 1, name: 'Leader election status' }).waitFor({ timeout: 5_000 });
    const table = page.getByRole('table', { name: /Elections/ });
    expect(await table.getByRole('columnheader').allTextContents()).toEqual([
      'Election',
      'Leader',
      'Term',
      'Lease valid until',
      'This replica',
      'Health',
    ]);
    expect(await page.getByRole('status').count()).toBe(1);
    expect(await page.locator('[aria-live="polite"]').count()).toBe(1);
    const row = page.locator(`tbody tr[data-election="${election}"]`);
    const leaderCell = row.locator('td.leader');
    await leaderCell.filter({ hasText: /^replica-1$/ }).waitFor({ timeout: 15_000 });
    expect(await table.getByRole('rowheader').allTextContents()).toEqual([election]);
    await page.locator('#connection', { hasText: 'live' }).waitFor({ timeout: 5_000 });
    expect(await page.locator('#identity').textContent()).toBe('replica-2');
    expect(await row.locator('td').nth(3).textContent()).toBe('follower');
    // Marks this document: a reload would lose it.
    await page.evaluate(() => {
      (globalThis as unknown as { notReloaded: boolean }).notReloaded = true;
    });

    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    await leaderCell.filter({ hasText: /^replica-2$/ }).waitFor({ timeout: PAGE_BOUND_MS });
    const shownAfterMs = Date.now() - killedAt;
    expect(shownAfterMs).toBeLessThanOrEqual(PAGE_BOUND_MS);
    expect(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(await row.locator('td').nth(3).textContent()).toBe('leader');
    expect(Number(await row.locator('td').nth(1).textContent())).toBeGreaterThanOrEqual(2);
    await page.locator('#announce', { hasText: `${election}: new leader replica-2` }).waitFor({ timeout: 1_000 });
    await page.locator('#events li', { hasText: 'elected' }).first().waitFor({ timeout: 1_000 });
    console.log(`status page showed the new leader ${shownAfterMs} ms after kill -9 (bound ${PAGE_BOUND_MS} ms)`);

    // The same replica's other windows on it: GET /leader (today's fields plus `elections`) and /metrics.
    const status = (await (await fetch(`http://127.0.0.1:${second.port}/leader`)).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ election, identity: 'replica-2', isLeader: true, leaderId: 'replica-2' });
    expect(status.elections).toEqual([
      expect.objectContaining({ election, isLeader: true, leaderId: 'replica-2', state: 'leader', healthy: true }),
    ]);
    const scrape = await fetch(`http://127.0.0.1:${second.port}/metrics`);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain/);
    const samples = parsePrometheusText(await scrape.text());
    expect(sampleValue(samples, 'leader_election_is_leader', { election, identity: 'replica-2' })).toBe(1);
    expect(sampleValue(samples, 'leader_election_transitions_total', { election, type: 'elected' })).toBe(1);
    expect(sampleValue(samples, 'leader_election_leaderless_seconds', { election })).toBe(0);
    expect(
      sampleValue(samples, 'leader_election_leader_only_skipped_total', { election, handler: 'JobsController.runNow' }),
    ).toBe(0);

    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'status-page-after-failover.png'), fullPage: true });

    // A replica with a page attached still shuts down on SIGTERM: the stream ends, the page says so.
    const exit = new Promise<NodeJS.Signals | null>((resolve) =>
      second.child.once('exit', (_, signal) => resolve(signal)),
    );
    second.child.kill('SIGTERM');
    // Nest runs the shutdown hooks, then re-raises the signal it caught.
    expect(await withTimeout(exit, 15_000, 'replica-2 to exit on SIGTERM')).toBe('SIGTERM');
    expect(second.output.some((line) => line.includes('"event":"stopped"'))).toBe(true);
    await page.locator('#connection', { hasText: 'disconnected' }).waitFor({ timeout: 5_000 });
  }, 120_000);
});
