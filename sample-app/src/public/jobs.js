// @ts-nocheck -- browser code, like the page's inline script: the repo's tsconfig has Node's types and
// no DOM; test/browser/status-page.spec.ts runs it in Chromium.
// The status page's jobs tables: every scheduled leader-only job of the app, per election, as
// `GET /jobs` reads them from the store (the job board and the leaders' run histories), refreshed
// every few seconds, with Pause / Resume / Run now. Any replica takes the commands: they are
// recorded in the store, and the leader of the job's election applies them at its next renewal.

(() => {
  /** Each refresh reads the store (the board and one history per job), so not more often than this. */
  const REFRESH_MS = 2_000;
  const $ = (id) => document.getElementById(id);
  const clock = (ms) => new Date(ms).toLocaleTimeString();
  /** One table per election, one row per job, updated in place: a refresh must not clear a reason being typed. */
  const tables = new Map();
  const rows = new Map();

  function timeOf(ms) {
    const time = document.createElement('time');
    time.dateTime = new Date(ms).toISOString();
    time.textContent = clock(ms);
    return time;
  }

  function newTable(election) {
    const table = document.createElement('table');
    table.dataset.election = election;
    table.createCaption().textContent = `Jobs of ${election}`;
    const head = table.createTHead().insertRow();
    for (const name of ['Job', 'Schedule', 'Paused', 'Last run', 'Ran by', 'Outcome', 'Next run', 'Control']) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = name;
      head.append(th);
    }
    $('jobs').append(table);
    return table.createTBody();
  }

  function button(text, label, onClick) {
    const element = document.createElement('button');
    element.type = 'button';
    element.textContent = text;
    element.setAttribute('aria-label', label);
    element.addEventListener('click', onClick);
    return element;
  }

  function newRow(job) {
    const tr = document.createElement('tr');
    tr.dataset.job = job.name;
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = job.name;
    const cells = ['schedule', 'paused', 'last-run', 'by', 'outcome', 'next-run'].map((role) => {
      const td = document.createElement('td');
      td.className = role;
      return td;
    });
    const reason = document.createElement('input');
    reason.type = 'text';
    reason.maxLength = 500;
    reason.placeholder = 'reason (optional)';
    reason.setAttribute('aria-label', `Reason to pause ${job.name}`);
    const row = { tr, cells, reason, busy: false, paused: false };
    row.pause = button('Pause', `Pause ${job.name}`, () => send(row, job, 'pause'));
    row.resume = button('Resume', `Resume ${job.name}`, () => send(row, job, 'resume'));
    row.runNow = button('Run now', `Run now: ${job.name}`, () => send(row, job, 'run-now'));
    const control = document.createElement('td');
    control.append(reason, ' ', row.pause, ' ', row.resume, ' ', row.runNow);
    tr.append(th, ...cells, control);
    return row;
  }

  /** Pause only when running on schedule, Resume only when paused; none while a command is on its way. */
  function enable(row) {
    row.pause.disabled = row.busy || row.paused;
    row.resume.disabled = row.busy || !row.paused;
    row.runNow.disabled = row.busy;
  }

  function describeOutcome(run) {
    const took = run.durationMs === undefined ? '' : ` ${run.outcome === 'ok' ? 'in' : 'after'} ${run.durationMs} ms`;
    if (run.outcome === 'error') return `error${took}${run.error ? `: ${run.error}` : ''}`;
    return run.outcome === 'running' ? 'running' : `${run.outcome}${took}`;
  }

  function update(row, job) {
    const [schedule, paused, lastRun, by, outcome, nextRun] = row.cells;
    schedule.textContent = job.schedule;
    row.paused = job.paused;
    const pause = job.pause;
    paused.textContent = !job.paused
      ? 'no'
      : pause
        ? `yes, by ${pause.by} at ${clock(pause.at)}${pause.reason ? `: ${pause.reason}` : ''}`
        : 'yes';
    const run = job.lastRun;
    if (run) {
      lastRun.replaceChildren(timeOf(run.startedAt), run.trigger === 'run-now' ? ' (run now)' : '');
      by.textContent = `${run.by}, term ${run.term}`;
      outcome.textContent = describeOutcome(run);
    } else {
      lastRun.textContent = 'never';
      by.textContent = '—';
      outcome.textContent = '—';
    }
    if (job.nextRunAt === undefined) nextRun.textContent = '—';
    else nextRun.replaceChildren(timeOf(job.nextRunAt), job.paused ? ' (skipped: paused)' : '');
    enable(row);
  }

  function render(list) {
    if (list.jobs.length === 0) $('jobs').textContent = 'This app has no scheduled leader-only jobs.';
    for (const job of list.jobs) {
      const key = `${job.election}\n${job.name}`;
      let row = rows.get(key);
      if (!row) {
        let tbody = tables.get(job.election);
        if (!tbody) {
          if (tables.size === 0) $('jobs').replaceChildren();
          tbody = newTable(job.election);
          tables.set(job.election, tbody);
        }
        row = newRow(job);
        rows.set(key, row);
        tbody.append(row.tr);
      }
      update(row, job);
    }
  }

  const ANSWERS = {
    pause: 'pause recorded; the leader skips its scheduled runs from its next renewal',
    resume: 'resume recorded; the leader runs it on schedule again from its next renewal',
    'run-now': 'run now recorded; the leader runs it once at its next renewal',
  };

  async function send(row, job, command) {
    const result = $('jobs-result');
    const body = { election: job.election };
    if (command === 'pause' && row.reason.value.trim() !== '') body.reason = row.reason.value.trim();
    row.busy = true;
    enable(row);
    result.textContent = `${job.name}: sending ${command}…`;
    try {
      const response = await fetch(`/jobs/${encodeURIComponent(job.name)}/${command}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = await response.json().catch(() => ({}));
      if (response.status === 202) {
        result.textContent = `${job.name}: ${ANSWERS[command]} (asked by ${answer.requestedBy})`;
        if (command === 'pause') row.reason.value = '';
      } else {
        result.textContent = `${job.name}: ${command} refused (${response.status}): ${answer.message ?? response.statusText}`;
      }
    } catch (error) {
      result.textContent = `${job.name}: ${command} failed: ${error.message}`;
    } finally {
      row.busy = false;
      enable(row);
      void refresh();
    }
  }

  async function load() {
    try {
      const response = await fetch('/jobs', { cache: 'no-store' });
      const body = await response.json().catch(() => ({}));
      if (!response.ok) throw new Error(`${response.status} ${body.message ?? response.statusText}`);
      render(body);
      $('jobs-updated').textContent = `read from the store at ${clock(Date.now())}`;
    } catch (error) {
      $('jobs-updated').textContent = `not updated: ${error.message}`;
    }
  }

  /** One read at a time; a refresh asked for meanwhile (after a command) reads again once it ends. */
  let running;
  let again = false;
  function refresh() {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await load();
      } while (again);
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  // A hidden tab reads nothing: the reads cost store calls.
  async function tick() {
    if (document.visibilityState !== 'hidden') await refresh();
    setTimeout(tick, REFRESH_MS);
  }
  void tick();
})();
