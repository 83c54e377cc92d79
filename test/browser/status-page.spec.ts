// The sample app's live status page in a real headless Chromium (Debian's `chromium`, driven by
// playwright-core): two real sample-app processes run three elections over Azurite and spread them
// (2 + 1). On the second replica's page — opened once and never reloaded — the jobs tables list the
// sample's jobs with the replica that last ran each; Pause, Run now and Resume of a job the first
// replica leads take effect there (judged by its run history in the store, job-control.steps.ts); a
// click hands one of the first replica's elections over to the second, and the page names the new
// leader within a renew interval + a poll + slack; after kill -9 of the first replica, its last
// election moves too, within lease + retry + 2 s; a third replica with a higher priority shows its
// priority as the leader's. A screenshot is kept under test-artifacts/ (or $TEST_ARTIFACTS_DIR): after
// the failover, or — when the test fails — of the page as it was then (status-page-on-failure.png).
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { buildSampleApp } from '../support/build-sample-app.js';
import { parsePrometheusText, samplesOf, sampleValue } from '../support/prometheus-text.js';
import { checkJobControlErrors, checkJobsTables, pauseRunNowResume, SAMPLE_JOBS } from './job-control.steps.js';
import { type ElectionStatus, electionsOf, type Replica, ROOT, startReplica, withTimeout } from './sample-replicas.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = process.env.TEST_ARTIFACTS_DIR ?? join(ROOT, 'test-artifacts');

// The sample app's defaults (Azure's shortest lease, the default retry interval).
const LEASE_MS = 15_000;
const RETRY_MS = 2_000;
const RENEW_MS = 2_500;
const PAGE_BOUND_MS = LEASE_MS + RETRY_MS + 2_000;
/** On Azure the leader reads a handover request at every 4th renewal (readEveryNthRenewal, issue 29). */
const READ_EVERY = 4;
/** A directed handover: the leader reads the request at its next read turn, the new one takes it at its next poll. */
const HANDOVER_BOUND_MS = READ_EVERY * RENEW_MS + RETRY_MS * 1.15 + 3_000;
/** Spread moves one election to the newcomer: its next spread check, then a directed-like handover. */
const SPREAD_TIMEOUT_MS = 40_000;

const inCI = process.env.CI === 'true';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && !inCI) {
  console.warn(`status page browser test skipped: ${CHROMIUM} not found (apt-get install -y chromium)`);
}
// In CI a missing browser is a failure, never a silent skip.
const describeBrowser = haveChromium || inCI ? describe : describe.skip;

/** Saves a full-page screenshot under ARTIFACTS and says where. */
async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  await page.screenshot({ path, fullPage: true });
  console.log(`status page screenshot saved: ${path}`);
}

/** Polls `GET /leader` until `done` holds; returns the elections then. */
async function waitForElections(
  replica: Replica,
  done: (elections: ElectionStatus[]) => boolean,
  timeoutMs: number,
  what: string,
): Promise<ElectionStatus[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const elections = await electionsOf(replica);
    if (done(elections)) return elections;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(elections)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describeBrowser('status page in headless Chromium', () => {
  const replicas: Replica[] = [];
  let context: BrowserContext | undefined;
  /** The page once opened: afterAll screenshots it when the test failed. */
  let openPage: Page | undefined;
  let passed = false;
  let userDataDir: string | undefined;

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`CI=true but ${CHROMIUM} is missing: .ci/run must install Debian's chromium`);
    await buildSampleApp();
  }, 180_000);

  afterAll(async () => {
    // A failed run keeps what the page showed when it failed: the artifact one needs most.
    if (openPage && !passed) {
      await screenshot(openPage, 'status-page-on-failure.png').catch((error: unknown) =>
        console.warn(`status page screenshot on failure not saved: ${String(error)}`),
      );
    }
    await context?.close();
    for (const replica of replicas) replica.child.kill('SIGKILL');
    await Promise.all(replicas.map((replica) => replica.exited));
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  it('shows every election and its jobs, controls a job from a follower, hands over on a click, and shows the failover, live', async () => {
    const prefix = `status-page-${process.pid}-${Date.now()}`;
    const elections = ['reports', 'billing', 'cleanup'].map((name) => `${prefix}-${name}`);
    const [defaultElection] = elections;
    const first = await startReplica('replica-1', elections);
    replicas.push(first);
    // Startup waits for the first acquire attempts: alone, replica-1 leads all three.
    expect((await electionsOf(first)).map((e) => e.leaderId)).toEqual(['replica-1', 'replica-1', 'replica-1']);
    const second = await startReplica('replica-2', elections);
    replicas.push(second);
    const advertise = { 'replica-1': `http://127.0.0.1:${first.port}`, 'replica-2': `http://127.0.0.1:${second.port}` };
    // Spread: replica-2 asks replica-1 for one election (3 against 0), then 2 + 1 is balanced.
    const spread = await waitForElections(
      second,
      (list) => list.filter((e) => e.leaderId === 'replica-2').length === 1 && list.every((e) => e.leaderId !== null),
      SPREAD_TIMEOUT_MS,
      'spread to give replica-2 one election',
    );
    const ofFirst = spread.filter((e) => e.leaderId === 'replica-1').map((e) => e.election);
    expect(ofFirst).toHaveLength(2);
    const [handedOver, crashedWith] = ofFirst as [string, string];

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
    openPage = page;
    const response = await page.goto(`http://127.0.0.1:${second.port}/`);
    expect(response?.status()).toBe(200);
    expect(await page.title()).toBe('Leader election status');
    // Reachable by role and name, as assistive technology finds it.
    await page.getByRole('heading', { level: 1, name: 'Leader election status' }).waitFor({ timeout: 5_000 });
    const table = page.getByRole('table', { name: /Elections/ });
    expect(await table.getByRole('columnheader').allTextContents()).toEqual([
      'Election',
      'Leader',
      "Leader's address",
      'Term',
      "Leader's priority",
      'Lease valid until',
      'This replica',
      'Health',
      'Hand over',
    ]);
    expect(await page.getByRole('status').count()).toBe(1);
    // Leader changes, handover answers and job command answers are announced.
    expect(await page.locator('[aria-live="polite"]').count()).toBe(3);
    const rowOf = (election: string) => page.locator(`tbody tr[data-election="${election}"]`);
    // Every election, with its leader, the leader's address and its term (as of the follower's last poll).
    for (const { election, leaderId } of spread) {
      const row = rowOf(election);
      await row
        .locator('td.leader')
        .filter({ hasText: new RegExp(`^${leaderId}$`) })
        .waitFor({ timeout: 15_000 });
      expect(await row.locator('td.advertise').textContent()).toBe(advertise[leaderId as keyof typeof advertise]);
      const term = await row.locator('td.term').textContent();
      expect(Number(term)).toBeGreaterThanOrEqual(leaderId === 'replica-2' ? 2 : 1);
      expect(await row.locator('td.self').textContent()).toBe(leaderId === 'replica-2' ? 'leader' : 'follower');
      // Every replica runs with the default priority; the third one, below, does not.
      expect(await row.locator('td.priority').textContent()).toBe('0');
    }
    expect(await table.getByRole('rowheader').allTextContents()).toEqual(elections);
    await page.locator('#connection', { hasText: 'live' }).waitFor({ timeout: 5_000 });
    expect(await page.locator('#identity').textContent()).toBe('replica-2');
    expect(await page.locator('#priority').textContent()).toBe('0');
    // Marks this document: a reload would lose it.
    await page.evaluate(() => {
      (globalThis as unknown as { notReloaded: boolean }).notReloaded = true;
    });

    // 1. Jobs, on a follower's page: every sample job with its last run; then Pause, Run now and
    // Resume of the most frequent job among those replica-1 leads (one of the two runs every 10 s or
    // more often), each applied by replica-1.
    const jobsFrom = Date.now();
    await checkJobsTables(page, elections, ofFirst);
    const [target] = SAMPLE_JOBS.filter((job) => ofFirst.includes(elections[job.election] as string)).sort(
      (a, b) => a.periodMs - b.periodMs,
    );
    if (!target) throw new Error(`no sample job in replica-1's elections ${ofFirst.join(', ')}`);
    await pauseRunNowResume(page, second, first, target, elections[target.election] as string);
    await checkJobControlErrors(second);
    console.log(`job control on the status page checked in ${Date.now() - jobsFrom} ms (${target.name})`);

    // 2. A click hands one of replica-1's elections over to replica-2.
    const moved = rowOf(handedOver);
    await page.getByRole('combobox', { name: `Hand ${handedOver} over to` }).selectOption('replica-2');
    const clickedAt = Date.now();
    await page.getByRole('button', { name: `Hand over ${handedOver}` }).click();
    await page
      .locator('#handover-result', { hasText: `${handedOver}: handover requested from replica-1 to replica-2` })
      .waitFor({ timeout: 10_000 });
    await moved
      .locator('td.leader')
      .filter({ hasText: /^replica-2$/ })
      .waitFor({ timeout: HANDOVER_BOUND_MS });
    const handedAfterMs = Date.now() - clickedAt;
    expect(await moved.locator('td.self').textContent()).toBe('leader');
    expect(await moved.locator('td.advertise').textContent()).toBe(advertise['replica-2']);
    await page.locator('#announce', { hasText: `${handedOver}: new leader replica-2` }).waitFor({ timeout: 1_000 });
    console.log(`status page showed the handover ${handedAfterMs} ms after the click (bound ${HANDOVER_BOUND_MS} ms)`);
    // A handover to the replica that already leads is refused, and the page says why.
    await page.getByRole('combobox', { name: `Hand ${handedOver} over to` }).selectOption('replica-2');
    await page.getByRole('button', { name: `Hand over ${handedOver}` }).click();
    await page
      .locator('#handover-result', { hasText: `${handedOver}: handover refused (409): replica-2 already leads` })
      .waitFor({ timeout: 10_000 });

    // 3. kill -9 replica-1: its last election moves to replica-2 once the lease expires.
    const row = rowOf(crashedWith);
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    await row
      .locator('td.leader')
      .filter({ hasText: /^replica-2$/ })
      .waitFor({ timeout: PAGE_BOUND_MS });
    const shownAfterMs = Date.now() - killedAt;
    expect(shownAfterMs).toBeLessThanOrEqual(PAGE_BOUND_MS);
    expect(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(await row.locator('td.self').textContent()).toBe('leader');
    expect(Number(await row.locator('td.term').textContent())).toBeGreaterThanOrEqual(2);
    await page.locator('#announce', { hasText: `${crashedWith}: new leader replica-2` }).waitFor({ timeout: 1_000 });
    await page.locator('#events li', { hasText: 'elected' }).first().waitFor({ timeout: 1_000 });
    console.log(`status page showed the new leader ${shownAfterMs} ms after kill -9 (bound ${PAGE_BOUND_MS} ms)`);

    // The same replica's other windows on it: GET /leader (the default election's fields plus
    // `elections`) and /metrics, labelled per election.
    const status = (await (await fetch(`http://127.0.0.1:${second.port}/leader`)).json()) as Record<string, unknown>;
    expect(status).toMatchObject({
      election: defaultElection,
      identity: 'replica-2',
      isLeader: true,
      leaderId: 'replica-2',
      leaderAdvertise: advertise['replica-2'],
    });
    expect(status.elections).toEqual(
      elections.map((election) =>
        expect.objectContaining({ election, isLeader: true, leaderId: 'replica-2', state: 'leader', healthy: true }),
      ),
    );
    const scrape = await fetch(`http://127.0.0.1:${second.port}/metrics`);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain/);
    const samples = parsePrometheusText(await scrape.text());
    for (const election of elections) {
      expect(sampleValue(samples, 'leader_election_is_leader', { election, identity: 'replica-2' })).toBe(1);
      // Once each: by spread, by the click, by the failover.
      expect(sampleValue(samples, 'leader_election_transitions_total', { election, type: 'elected' })).toBe(1);
      expect(sampleValue(samples, 'leader_election_leaderless_seconds', { election })).toBe(0);
    }
    expect(
      sampleValue(samples, 'leader_election_leader_only_skipped_total', {
        election: defaultElection,
        handler: 'JobsController.runNow',
      }),
    ).toBe(0);
    // Exactly the labels of docs/reference/metrics.md (the sample app's exporter drops otel_scope_name).
    const labelNames = (name: string) => [
      ...new Set(samplesOf(samples, name).map((sample) => Object.keys(sample.labels).sort().join(','))),
    ];
    expect(labelNames('leader_election_is_leader')).toEqual(['election,identity']);
    expect(labelNames('leader_election_transitions_total')).toEqual(['election,type']);
    expect(labelNames('leader_election_stuck_work_seconds')).toEqual(['election,handler']);
    // stuckAfterMs is set in the sample app: its jobs are watched (0: not stuck), the pump opted out.
    expect(
      sampleValue(samples, 'leader_election_stuck_work_seconds', {
        election: defaultElection,
        handler: 'JobsController.runNow',
      }),
    ).toBe(0);
    expect(samplesOf(samples, 'leader_election_stuck_work_seconds', { handler: 'QueueWorker.pump' })).toEqual([]);

    // 4. A third replica with priority 10: it takes elections from replica-2 (priority and spread),
    // and the page shows the new leader's priority, read from its lease.
    const thirdFrom = Date.now();
    replicas.push(await startReplica('replica-3', elections, { PRIORITY: '10' }));
    const outranked = page
      .locator('#elections tr')
      .filter({ has: page.locator('td.leader', { hasText: /^replica-3$/ }) });
    await outranked.first().waitFor({ timeout: SPREAD_TIMEOUT_MS });
    console.log(`status page showed replica-3 (priority 10) leading ${Date.now() - thirdFrom} ms after its start`);
    for (const priority of await outranked.locator('td.priority').allTextContents()) expect(priority).toBe('10');
    expect(await page.locator('#priority').textContent()).toBe('0');

    await screenshot(page, 'status-page-after-handover-and-failover.png');

    // A replica with a page attached still shuts down on SIGTERM: the stream ends, the page says so.
    const exit = new Promise<NodeJS.Signals | null>((resolve) =>
      second.child.once('exit', (_, signal) => resolve(signal)),
    );
    second.child.kill('SIGTERM');
    // Nest runs the shutdown hooks, then re-raises the signal it caught.
    expect(await withTimeout(exit, 15_000, 'replica-2 to exit on SIGTERM')).toBe('SIGTERM');
    expect(second.output.some((line) => line.includes('"event":"stopped"'))).toBe(true);
    await page.locator('#connection', { hasText: 'disconnected' }).waitFor({ timeout: 5_000 });
    passed = true;
  }, 200_000);
});
