import { JOB_BOARD_KEY, type JobBoard } from '../../lib/election/job-board.js';
import type { CronMetadata } from '../../lib/leadership/cron-schedule.js';
import type { ElectionRuntime } from '../../lib/leadership/election-runtime.js';
import type { JobDefinition } from '../../lib/leadership/jobs/job.definition.js';
import type { RunTrigger } from '../../lib/leadership/jobs/job.runs.js';
import type { CheckName } from './checker.js';
import type { featureBounds } from './feature-bounds.js';
import type { FeatureScenario, JobCommand } from './feature-scenario.js';
import type { SimReplica } from './replica.js';
import type { RecordWritten, SimLeaseServer } from './sim-store.js';
import { currentNode, inNode, type World } from './world.js';

type Fail = (check: CheckName, message: string, key?: string) => void;

/** The phases of the run (true time) the checks hold in. */
export interface JobPhases {
  warmupMs: number;
  quietStart: number;
  quietEnd: number;
}

/** A run-now command as the store's history of the board tells it, and what became of it. */
interface RunNow {
  id: string;
  election: string;
  job: string;
  /** When the store first held it (true time). */
  recordedAt: number;
  /** When a write removed it from the board (a leader's claim), and whose; cleared when given back. */
  claimedAt?: number;
  claimedBy?: string;
  /** How often a leader whose term ended before it could run it put it back on the board. */
  returned: number;
  /** When its run started, and where. */
  ranAt?: number;
  ranOn?: string;
  runs: number;
  reported?: boolean;
}

/**
 * Job control in the feature world (issue #28): operators pause, resume and run jobs now on random
 * replicas through the service's calls (`JobOperations`), and every replica's runtimes keep the
 * job board in the store. What the checks trust is the store's history of the board (every write
 * the server applied, with its true time) and the runs themselves, each seen at the job's method.
 * Check `jobs`:
 *
 * - pause (safety): no scheduled call of a paused job runs once the leader has applied the pause:
 *   when the call was made (its timer fired) more than `applyMs` (one renew interval and the read's
 *   round trips, feature-bounds.ts) after the store recorded the pause, and the pause still stood,
 *   in calm phases (a pause recorded in the faults counts from the end of their recovery).
 * - resume (liveness): a tick lost on a stable leader is excused only while its job was paused in
 *   the store within `applyMs` before its timer fired; lost after that, it is a `jobs` violation.
 * - run now (safety): each command runs at most once ever, on a replica that leads its election
 *   (isLeader() and the store's holder) at that instant; never a command the store did not hold.
 * - run now (liveness): a command the store holds, unclaimed, from the recovery of the quiet phase
 *   on runs within `runNowMs` (next renewal, claim, run; or a failover first). Where run now meets
 *   a handover or resignation: a claim whose term ended before it ran is given back (it reappears
 *   on the board) and the bound still holds from when the command was recorded.
 */
export class JobWorld {
  /** Per job index, the method the explorer would find: shared by every replica, as a class's method is. */
  readonly methods: Array<(...args: unknown[]) => unknown>;
  private readonly commands = new Map<string, RunNow>();
  private seenWrites = 0;
  /** The board writes of each election, in order. */
  private readonly boards = new Map<string, RecordWritten[]>();
  /** The trigger of the run whose method is being called (set around the library's `runs.track`). */
  private trigger?: RunTrigger;
  readonly stats = {
    issued: 0,
    failed: 0,
    scheduledRuns: 0,
    /** Scheduled runs of a job the store had paused, within the bound of applying it (allowed). */
    runsWhilePausing: 0,
    /** Ticks lost on a stable leader, excused by a pause. */
    pausedTicks: 0,
    runNows: 0,
  };

  constructor(
    private readonly scenario: FeatureScenario,
    private readonly world: World,
    private readonly server: SimLeaseServer,
    private readonly bounds: ReturnType<typeof featureBounds>,
    private readonly phases: JobPhases,
    private readonly fail: Fail,
    private readonly crons: CronMetadata[],
    /** A scheduled call's own work (the tick bookkeeping of features.ts), given the call's arguments. */
    scheduled: (job: number, args: unknown[]) => void,
    /** The live replica of that identity, if any. */
    private readonly replicaOf: (identity: string) => SimReplica | undefined,
  ) {
    this.methods = scenario.jobs.map((_, j) => (...args: unknown[]) => {
      if (args.length > 0) scheduled(j, args);
      else this.ranNow(j);
    });
  }

  /** The election and name of job `j`. */
  private jobOf(j: number): { election: string; name: string } {
    const job = this.scenario.jobs[j] as FeatureScenario['jobs'][number];
    return { election: `e${job.election}`, name: job.label };
  }

  /**
   * A new runtime: its election's jobs registered as the explorer does (a second job of one name
   * fails there, so it is left out, as the ledger refuses its ticks), and its runs observed.
   */
  setup(handle: ElectionRuntime): void {
    this.scenario.jobs.forEach((job, j) => {
      if (`e${job.election}` !== handle.election) return;
      const method = this.methods[j] as (...args: unknown[]) => unknown;
      const definition: JobDefinition = {
        name: job.label,
        label: job.label,
        schedule: { kind: 'cron', cron: this.crons[j] as CronMetadata },
        onceTick: true,
        method,
        invoke: () => method(),
        owner: `Provider${j}`,
      };
      try {
        handle.jobs.register(definition);
      } catch {
        // Refused (name clash): the app would not start with it; its ticks are refused too.
      }
    });
    // The library records each run with its trigger here: the method called inside learns it.
    const { runs } = handle.jobs;
    const track = runs.track.bind(runs);
    runs.track = <T>(job: JobDefinition, trigger: RunTrigger, call: () => T): T =>
      track(job, trigger, () => {
        const outer = this.trigger;
        this.trigger = trigger;
        try {
          return call();
        } finally {
          this.trigger = outer;
        }
      });
  }

  /** An operator's command on `replica`, through the service's call; what the store recorded is what counts. */
  issue(command: JobCommand, replica: SimReplica | undefined): void {
    const ops = replica?.jobOps;
    if (!replica || !ops) return;
    const { name } = this.jobOf(command.job);
    const by = `${replica.identity}-operator`;
    this.stats.issued += 1;
    inNode(replica.identity, () => {
      const call =
        command.op === 'pause'
          ? ops.pauseJob(name, { by })
          : command.op === 'resume'
            ? ops.resumeJob(name, { by })
            : ops.runJobNow(name, { by });
      // A store error, a contended board or an election this replica no longer runs: the operator
      // sees it; the store's history says whether it landed all the same.
      call.then(
        () => this.trace(`${replica.identity} ${command.op} ${name}: recorded`),
        (error: unknown) => {
          this.stats.failed += 1;
          this.trace(`${replica.identity} ${command.op} ${name}: ${error}`);
        },
      );
    });
  }

  /** A scheduled run of job `j`, whose timer fired at `fired` (true time). */
  scheduledRun(j: number, identity: string, handle: ElectionRuntime, fired: number): void {
    this.stats.scheduledRuns += 1;
    this.ingest();
    if (this.trigger?.trigger !== 'schedule')
      this.fail(
        'jobs',
        `job ${j} ran a scheduled call outside job control's run record (trigger ${this.trigger?.trigger})`,
      );
    const { election, name } = this.jobOf(j);
    const since = this.pausedSince(election, name, fired);
    if (since === undefined) return;
    const from = this.inForceFrom(since, fired);
    if (from === undefined) return;
    if (fired - from <= this.bounds.applyMs) {
      this.stats.runsWhilePausing += 1;
      return;
    }
    this.fail(
      'jobs',
      `job ${j} (${name}) ran its scheduled call of ${fired.toFixed(0)} ms on ${identity} (term ${handle.term}), paused in the store since ${since.toFixed(0)} ms (in force from ${from.toFixed(0)} ms; bound ${this.bounds.applyMs.toFixed(0)} ms)`,
      `jobs:pause:${j}:${since}`,
    );
  }

  /** A run of job `j` by its `invoke` (run now). */
  private ranNow(j: number): void {
    this.stats.runNows += 1;
    this.ingest();
    const identity = currentNode() ?? '?';
    const { election, name } = this.jobOf(j);
    const trigger = this.trigger;
    const id = trigger?.commandId;
    if (trigger?.trigger !== 'run-now' || id === undefined) {
      this.fail('jobs', `job ${j} (${name}) run by its invoke on ${identity} without a run-now command`);
      return;
    }
    const command = this.commands.get(id);
    if (!command || command.job !== name || command.election !== election) {
      this.fail('jobs', `run-now ${id} ran job ${name} on ${identity}: no such command for it was ever recorded`);
      return;
    }
    command.runs += 1;
    if (command.runs > 1)
      this.fail(
        'jobs',
        `run-now ${id} of ${name} ran ${command.runs} times (first on ${command.ranOn} at ${command.ranAt?.toFixed(0)} ms, now on ${identity})`,
        `jobs:twice:${id}`,
      );
    this.trace(`${identity} runs ${name} for run-now ${id} recorded at ${command.recordedAt.toFixed(1)}`);
    command.ranAt ??= this.world.now;
    command.ranOn ??= identity;
    const handle = this.replicaOf(identity)?.handles.get(election);
    const leads = handle !== undefined && inNode(identity, () => handle.isLeader());
    const store = this.server.slot(election);
    if (!leads || !store.held || store.holder !== identity || store.term !== handle?.term)
      this.fail(
        'jobs',
        `run-now ${id} of ${name} ran on ${identity}, which does not lead ${election} (isLeader ${leads}, term ${handle?.term}; store: ${store.held ? `${store.holder} term ${store.term}` : 'free'})`,
        `jobs:notleader:${id}`,
      );
  }

  /**
   * A tick of job `j` lost on a stable leader: undefined when a pause excuses it (paused in the store
   * within `applyMs` before its timer fired), else the check to report it under and why.
   */
  lostTick(j: number, fired: number): { check: CheckName; why: string; key?: string } | undefined {
    this.ingest();
    const { election, name } = this.jobOf(j);
    const from = fired - this.bounds.applyMs;
    const paused =
      isPaused(this.boardAt(election, from), name) ||
      (this.boards.get(election) ?? []).some(
        (w) => w.at > from && w.at <= fired && isPaused(w.value as JobBoard, name),
      );
    if (paused) {
      this.stats.pausedTicks += 1;
      return undefined;
    }
    const resumedAt = this.resumedBefore(election, name, fired);
    if (resumedAt === undefined) return { check: 'tick', why: '' };
    return {
      check: 'jobs',
      why: ` ${(fired - resumedAt).toFixed(0)} ms after its resume was recorded (bound ${this.bounds.applyMs.toFixed(0)} ms)`,
      key: `jobs:resume:${j}:${resumedAt}`,
    };
  }

  /** At every probe: the run-nows the store holds in the quiet phase must run within their bound. */
  probe(elections: string[], liveIds: Set<string>): void {
    this.ingest();
    const { quietStart, quietEnd } = this.phases;
    const recovered = quietStart + this.bounds.recoveryMs;
    for (const command of this.commands.values()) {
      if (command.ranAt !== undefined || command.reported) continue;
      // Claimed during the faults (or their recovery) by a leader that lost its term: dropped, run at most once.
      if (command.claimedAt !== undefined && command.claimedAt < recovered) continue;
      const from = Math.max(command.recordedAt, recovered);
      const deadline = from + this.bounds.runNowMs;
      if (command.recordedAt > quietEnd || deadline > quietEnd || this.world.now <= deadline) continue;
      if (!elections.includes(command.election)) continue;
      const runners = [...liveIds].filter((id) => this.replicaOf(id)?.handles.has(command.election));
      if (runners.length === 0) continue;
      command.reported = true;
      this.fail(
        'jobs',
        `run-now ${command.id} of ${command.job} (${command.election}) recorded at ${command.recordedAt.toFixed(0)} ms has not run ${(this.world.now - from).toFixed(0)} ms after ${from === command.recordedAt ? 'that' : `the quiet phase's recovery (${from.toFixed(0)} ms)`} (bound ${this.bounds.runNowMs.toFixed(0)} ms); ${command.claimedAt === undefined ? 'still on the board' : `claimed by ${command.claimedBy} at ${command.claimedAt.toFixed(0)} ms, never run`}`,
      );
    }
  }

  /** `SIM_TRACE_JOBS=1`: each command and what came of it, on the world's time. */
  private trace(line: string): void {
    if (process.env.SIM_TRACE_JOBS) console.log(`${this.world.now.toFixed(1)} jobs: ${line}`);
  }

  /** For the trace: what the operators did and what came of it. */
  figures(): Record<string, number> {
    this.ingest();
    const all = [...this.commands.values()];
    return {
      ...this.stats,
      runNowRecorded: all.length,
      runNowRan: all.filter((c) => c.ranAt !== undefined).length,
      runNowDropped: all.filter((c) => c.claimedAt !== undefined && c.ranAt === undefined).length,
      runNowReturned: all.reduce((n, c) => n + c.returned, 0),
      boardWrites: [...this.boards.values()].reduce((n, writes) => n + writes.length, 0),
    };
  }

  /** The board writes the server applied since the last look: the board's history and the commands' fates. */
  private ingest(): void {
    const { recordWrites } = this.server;
    for (; this.seenWrites < recordWrites.length; this.seenWrites++) {
      const write = recordWrites[this.seenWrites] as RecordWritten;
      if (write.key !== JOB_BOARD_KEY) continue;
      const writes = this.boards.get(write.election) ?? [];
      const before = new Set((writes.at(-1)?.value as JobBoard | undefined)?.runNow.map((c) => c.id));
      writes.push(write);
      this.boards.set(write.election, writes);
      const board = write.value as JobBoard;
      const now = new Set(board.runNow.map((c) => c.id));
      for (const queued of board.runNow) {
        if (this.commands.has(queued.id)) continue;
        this.commands.set(queued.id, {
          id: queued.id,
          election: write.election,
          job: queued.job,
          recordedAt: write.at,
          runs: 0,
          returned: 0,
        });
      }
      // Back on the board after a claim: given back by a leader whose term ended before it ran.
      for (const id of now) {
        const command = this.commands.get(id);
        if (before.has(id) || !command || command.claimedAt === undefined) continue;
        command.claimedAt = undefined;
        command.claimedBy = undefined;
        command.returned += 1;
      }
      for (const id of before) {
        const command = this.commands.get(id);
        if (now.has(id) || !command || command.claimedAt !== undefined) continue;
        command.claimedAt = write.at;
        command.claimedBy = write.node;
      }
    }
  }

  private boardAt(election: string, at: number): JobBoard | undefined {
    let board: JobBoard | undefined;
    for (const write of this.boards.get(election) ?? []) {
      if (write.at > at) break;
      board = write.value as JobBoard;
    }
    return board;
  }

  /** Since when `name` has stood paused in the store without a break, at `at`; undefined when it is not paused then. */
  private pausedSince(election: string, name: string, at: number): number | undefined {
    let since: number | undefined;
    for (const write of this.boards.get(election) ?? []) {
      if (write.at > at) break;
      if (!isPaused(write.value as JobBoard, name)) since = undefined;
      else since ??= write.at;
    }
    return since;
  }

  /** The last time before `at` the store recorded `name` no longer paused after a pause. */
  private resumedBefore(election: string, name: string, at: number): number | undefined {
    let wasPaused = false;
    let resumed: number | undefined;
    for (const write of this.boards.get(election) ?? []) {
      if (write.at > at) break;
      const paused = isPaused(write.value as JobBoard, name);
      if (wasPaused && !paused) resumed = write.at;
      wasPaused = paused;
    }
    return resumed;
  }

  /**
   * From when a pause recorded at `since` binds a call made at `at`: calm phases only (the warm-up,
   * or the quiet phase once recovered from the faults, a pause from the faults counting from then).
   */
  private inForceFrom(since: number, at: number): number | undefined {
    const { warmupMs, quietStart, quietEnd } = this.phases;
    if (at < warmupMs) return since;
    const recovered = quietStart + this.bounds.recoveryMs;
    if (at < recovered || at > quietEnd) return undefined;
    return Math.max(since, recovered);
  }
}

function isPaused(board: JobBoard | undefined, name: string): boolean {
  return board !== undefined && Object.hasOwn(board.paused, name);
}
