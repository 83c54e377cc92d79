// The status page's jobs tables, driven in Chromium on a FOLLOWER's page (status-page.spec.ts):
// what they list, then Pause, Run now and Resume of a job whose election the other replica leads,
// each judged by that leader's run history in the store and its own status, not by the page alone.
import type { Page } from 'playwright-core';
import {
  electionsOf,
  historyOf,
  type JobRun,
  type JobsStatus,
  jobsOf,
  poll,
  post,
  type Replica,
} from './sample-replicas.js';

/** The sample app's scheduled leader-only jobs: election by position in ELECTIONS, and their cron period. */
export const SAMPLE_JOBS = [
  { name: 'report', election: 0, schedule: 'cron */5 * * * * *', periodMs: 5_000 },
  { name: 'billing', election: 1, schedule: 'cron */10 * * * * *', periodMs: 10_000 },
  { name: 'cleanup', election: 2, schedule: 'cron */15 * * * * *', periodMs: 15_000 },
] as const;

const RENEW_MS = 2_500;
/** The sample app runs on Azure (Azurite): its leader reads the board every 4th renewal (readEveryNthRenewal). */
const READ_EVERY = 4;
/** A command is read by the leader at its next read turn (bound: one more renewal and slack for a loaded machine). */
const APPLY_BOUND_MS = (READ_EVERY + 1) * RENEW_MS + 3_000;
/** The leader writes its run records at its renewals: a run's start and end are in the store 1–2 renewals later. */
const RECORD_LAG_MS = 2 * RENEW_MS + 1_000;
/** A run now: claimed after the leader's next read of the board, run, then recorded. */
const RUN_NOW_BOUND_MS = (READ_EVERY + 4) * RENEW_MS + 4_000;
/** The jobs table reads `GET /jobs` every 2 s; one missed read and slack. */
const TABLE_BOUND_MS = 10_000;

export const JOB_COLUMNS = ['Job', 'Schedule', 'Paused', 'Last run', 'Ran by', 'Outcome', 'Next run', 'Control'];

const jobRow = (page: Page, job: string) => page.locator(`#jobs tr[data-job="${job}"]`);

/**
 * One table per election, captioned, with each sample job in its election's table and a last run
 * naming a replica: `replica-1` for the elections it has led from the start (`ofFirst`).
 */
export async function checkJobsTables(page: Page, elections: string[], ofFirst: string[]): Promise<void> {
  await page
    .locator('#jobs table')
    .nth(elections.length - 1)
    .waitFor({ timeout: TABLE_BOUND_MS });
  expect(await page.locator('#jobs table caption').allTextContents()).toEqual(elections.map((e) => `Jobs of ${e}`));
  for (const job of SAMPLE_JOBS) {
    const election = elections[job.election] as string;
    const table = page.getByRole('table', { name: `Jobs of ${election}` });
    expect(await table.getByRole('columnheader').allTextContents()).toEqual(JOB_COLUMNS);
    expect(await table.getByRole('rowheader').allTextContents()).toEqual([job.name]);
    const row = jobRow(page, job.name);
    expect(await row.locator('td.schedule').textContent()).toBe(job.schedule);
    expect(await row.locator('td.paused').textContent()).toBe('no');
    // The first cleanup (every 15 s) may still be ahead; its record lands at the renewal after it.
    const ranBy = ofFirst.includes(election) ? /^replica-1, term \d+$/ : /^replica-[12], term \d+$/;
    await row
      .locator('td.by')
      .filter({ hasText: ranBy })
      .waitFor({ timeout: job.periodMs + RECORD_LAG_MS + 10_000 });
    expect(await row.locator('td.outcome').textContent()).toMatch(/^(ok in \d+ ms|running)$/);
    expect(await row.locator('td.next-run time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
  }
}

/** The leader's job-control status in `election` (from its `GET /leader`). */
async function jobStatusOn(leader: Replica, election: string): Promise<JobsStatus> {
  const found = (await electionsOf(leader)).find((e) => e.election === election);
  if (!found?.jobs) throw new Error(`${leader.id} shows no jobs in ${election}`);
  return found.jobs;
}

/** When the `<time>` of the row's last run says it started (epoch ms). */
async function lastRunShown(page: Page, job: string): Promise<number> {
  return Date.parse((await jobRow(page, job).locator('td.last-run time').getAttribute('datetime')) ?? '');
}

/**
 * On `follower`'s page: Pause `job` (led by `leader`) with a reason, see it paused on the page and
 * applied by the leader, then Run now while paused: exactly one run-now run by the leader and no
 * scheduled run after the pause for at least 2 renew intervals and one of the job's ticks (the
 * leader counts it skipped); then Resume, and a scheduled run by the leader follows.
 */
export async function pauseRunNowResume(
  page: Page,
  follower: Replica,
  leader: Replica,
  job: (typeof SAMPLE_JOBS)[number],
  election: string,
): Promise<void> {
  const row = jobRow(page, job.name);
  const reason = 'incident 42 (browser test)';

  // 1. Pause, on the follower's page.
  await page.getByRole('textbox', { name: `Reason to pause ${job.name}` }).fill(reason);
  const clickedAt = Date.now();
  await page.getByRole('button', { name: `Pause ${job.name}` }).click();
  await page
    .locator('#jobs-result', { hasText: `${job.name}: pause recorded; the leader skips its scheduled runs` })
    .waitFor({ timeout: 10_000 });
  await row.locator('td.paused', { hasText: `yes, by ${follower.id} at ` }).waitFor({ timeout: TABLE_BOUND_MS });
  expect(await row.locator('td.paused').textContent()).toMatch(new RegExp(`: ${reason.replace(/[()]/g, '\\$&')}$`));
  expect(await row.locator('td.next-run').textContent()).toMatch(/\(skipped: paused\)$/);
  expect(await page.getByRole('button', { name: `Pause ${job.name}` }).isDisabled()).toBe(true);
  expect(await page.getByRole('button', { name: `Resume ${job.name}` }).isEnabled()).toBe(true);
  const before = await poll(
    async () => {
      const status = await jobStatusOn(leader, election);
      return status.paused?.includes(job.name) ? status : undefined;
    },
    APPLY_BOUND_MS,
    `${leader.id} to read the pause of ${job.name}`,
  );
  // From here on (the leader has read the board) no scheduled run of the job may start.
  const appliedAt = Date.now();
  console.log(`leader applied the pause of ${job.name} ${appliedAt - clickedAt} ms after the click`);

  // 2. Run now while paused, on the follower's page: it runs once, on the leader.
  const runClickedAt = Date.now();
  await page.getByRole('button', { name: `Run now: ${job.name}` }).click();
  await page
    .locator('#jobs-result', { hasText: `${job.name}: run now recorded; the leader runs it once` })
    .waitFor({ timeout: 10_000 });
  let runs: JobRun[] = [];
  const manual = await poll(
    async () => {
      runs = await historyOf(follower, job.name);
      const found = runs.filter((run) => run.trigger === 'run-now');
      return found.length > 0 && found.every((run) => run.outcome !== 'running') ? found : undefined;
    },
    RUN_NOW_BOUND_MS,
    `the run now of ${job.name} in its history`,
    () => runs,
  );
  console.log(`the run now of ${job.name} was recorded ${Date.now() - runClickedAt} ms after the click`);
  // A tick of the job comes while paused (the leader counts it skipped), and 2 renew intervals pass.
  await poll(
    async () =>
      (await jobStatusOn(leader, election)).skippedWhilePaused > before.skippedWhilePaused ? true : undefined,
    job.periodMs + RENEW_MS + 3_000,
    `${leader.id} to skip a tick of the paused ${job.name}`,
  );
  const waited = Date.now() - appliedAt;
  if (waited < 2 * RENEW_MS) await new Promise((resolve) => setTimeout(resolve, 2 * RENEW_MS - waited));
  // Anything that ran meanwhile has reached the store by now.
  await new Promise((resolve) => setTimeout(resolve, RECORD_LAG_MS));
  runs = await historyOf(follower, job.name);
  expect(runs.filter((run) => run.trigger === 'schedule' && run.startedAt >= appliedAt)).toEqual([]);
  const runNows = runs.filter((run) => run.trigger === 'run-now');
  expect(runNows).toEqual(manual);
  expect(runNows).toEqual([
    expect.objectContaining({ job: job.name, by: leader.id, outcome: 'ok', commandId: expect.any(String) }),
  ]);
  // The page shows it: the newest run, by the leader, marked as a run now; still paused.
  await row.locator('td.last-run', { hasText: '(run now)' }).waitFor({ timeout: TABLE_BOUND_MS });
  expect(await row.locator('td.by').textContent()).toMatch(new RegExp(`^${leader.id}, term \\d+$`));
  expect(await lastRunShown(page, job.name)).toBe(runNows[0]?.startedAt);
  expect(await row.locator('td.paused').textContent()).toMatch(/^yes, by /);

  // 3. Resume, on the follower's page: scheduled runs start again, on the leader.
  const resumedAt = Date.now();
  await page.getByRole('button', { name: `Resume ${job.name}` }).click();
  await page
    .locator('#jobs-result', { hasText: `${job.name}: resume recorded; the leader runs it on schedule again` })
    .waitFor({ timeout: 10_000 });
  await row.locator('td.paused', { hasText: /^no$/ }).waitFor({ timeout: TABLE_BOUND_MS });
  const resumed = await poll(
    async () => {
      runs = await historyOf(follower, job.name);
      return runs.find((run) => run.trigger === 'schedule' && run.startedAt > resumedAt);
    },
    APPLY_BOUND_MS + job.periodMs + RECORD_LAG_MS,
    `a scheduled run of ${job.name} after the resume`,
    () => runs,
  );
  expect(resumed.by).toBe(leader.id);
  expect((await jobStatusOn(leader, election)).paused).not.toContain(job.name);
  console.log(`${job.name} ran on schedule again ${resumed.startedAt - resumedAt} ms after the resume`);
  await poll(
    async () => ((await lastRunShown(page, job.name)) > resumedAt ? true : undefined),
    TABLE_BOUND_MS,
    `the page to show the run after the resume`,
  );
  // Both replicas name the same leader as the last run's replica: it comes from the store.
  for (const replica of [follower, leader]) {
    const listed = (await jobsOf(replica)).find((info) => info.name === job.name);
    expect(listed).toMatchObject({ election, paused: false, lastRun: { by: leader.id } });
  }
}

/** Errors as HTTP, on any replica: an unknown job is 404, a bad body or election 400. */
export async function checkJobControlErrors(replica: Replica): Promise<void> {
  const unknown = await post(replica, '/jobs/no-such-job/pause', { reason: 'typo' });
  expect(unknown.status).toBe(404);
  expect(unknown.body).toMatchObject({ message: expect.stringContaining('no-such-job') });
  expect((await post(replica, '/jobs/report/pause', { reason: 42 })).status).toBe(400);
  const election = await post(replica, '/jobs/report/run-now', { election: 'nope' });
  expect(election).toMatchObject({
    status: 400,
    body: { message: expect.stringContaining('unknown election "nope"') },
  });
}
