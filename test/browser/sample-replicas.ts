// Real sample-app processes for the browser test, and what it reads of them over HTTP: the
// elections (`GET /leader`), the jobs (`GET /jobs`) and a job's run history.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/lib/ports.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

export interface Replica {
  id: string;
  port: number;
  child: ChildProcessWithoutNullStreams;
  output: string[];
  exited: Promise<void>;
}

/** Starts `sample-app/dist/main.js` as replica `id` over the test's Azurite; resolves once it listens. */
export async function startReplica(
  id: string,
  elections: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<Replica> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AZURE_STORAGE_CONNECTION_STRING: process.env.AZURITE_CONNECTION_STRING,
    ELECTIONS: elections.join(','),
    ELECTION: '',
    INSTANCE_ID: id,
    PORT: String(port),
    LOG_FORMAT: 'json',
    NO_COLOR: '1',
    ...extraEnv,
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

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
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

/**
 * Calls `probe` every 200 ms until it returns something other than undefined, and returns that;
 * throws after `timeoutMs`, with `describe()` (what was seen last) in the message.
 */
export async function poll<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
  describe: () => unknown = () => undefined,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${JSON.stringify(describe())}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function getJson<T>(replica: Replica, path: string): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${replica.port}${path}`, { signal: AbortSignal.timeout(5_000) });
  if (!res.ok) throw new Error(`GET ${path} on ${replica.id}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** This replica's side of job control in one election (`status().jobs`), as `GET /leader` shows it. */
export interface JobsStatus {
  count: number;
  paused: string[] | null;
  skippedWhilePaused: number;
  boardReadAt: string | null;
}

export interface ElectionStatus {
  election: string;
  isLeader: boolean;
  leaderId: string | null;
  leaderAdvertise: string | null;
  leaderPriority: number | null;
  jobs: JobsStatus | null;
}

export async function electionsOf(replica: Replica): Promise<ElectionStatus[]> {
  return (await getJson<{ elections: ElectionStatus[] }>(replica, '/leader')).elections;
}

/** One run as `GET /jobs/:name/history` lists it (the library's JobRun). */
export interface JobRun {
  job: string;
  startedAt: number;
  finishedAt?: number;
  outcome: 'ok' | 'error' | 'aborted' | 'running';
  by: string;
  term: number;
  trigger: 'schedule' | 'run-now';
  commandId?: string;
}

export interface JobInfo {
  name: string;
  election: string;
  schedule: string;
  paused: boolean;
  lastRun?: JobRun;
}

export async function jobsOf(replica: Replica): Promise<JobInfo[]> {
  return (await getJson<{ jobs: JobInfo[] }>(replica, '/jobs')).jobs;
}

export async function historyOf(replica: Replica, job: string): Promise<JobRun[]> {
  return (await getJson<{ runs: JobRun[] }>(replica, `/jobs/${encodeURIComponent(job)}/history`)).runs;
}

/** POSTs `body` as JSON; the status and the parsed answer. */
export async function post(replica: Replica, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://127.0.0.1:${replica.port}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
  return { status: res.status, body: await res.json() };
}
