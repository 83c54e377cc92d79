import type { Logger } from '@nestjs/common';
import { Elector } from '../../lib/election/elector.js';
import { ElectionRuntime } from '../../lib/leadership/election-runtime.js';
import { JobOperations } from '../../lib/leadership/jobs/job.operations.js';
import type { LeadershipOptions } from '../../lib/leadership/leadership-options.js';
import { SpreadBalancer } from '../../lib/leadership/spread.balancer.js';
import { systemClock } from '../../lib/shared/clock.js';
import type { FeatureScenario } from './feature-scenario.js';
import type { SimStoreClient } from './sim-store.js';
import type { NodeClock } from './world.js';

const silent = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
  verbose: () => undefined,
};

/**
 * One replica of the app, built as LeaderElectionService builds it (see its `newRuntime`,
 * `addElection`, `removeElection` and `shutdown`), without Nest: an election runtime (what
 * `election(name)` hands out as its `ElectionHandle`) per election over a real Elector on this
 * replica's clock and store connection, and the balancer over them (spread when the scenario says
 * so; the preferred leader's requests always, as the service does). With job control, the
 * runtimes keep the job board in the store (as the service's do) and `jobOps` are the service's
 * pauseJob / resumeJob / runJobNow.
 */
export class SimReplica {
  readonly handles = new Map<string, ElectionRuntime>();
  readonly spread: SpreadBalancer;
  started = false;
  /** The spread balancer runs (started, not yet stopped): its ticks may file spread requests. */
  spreading = false;
  stopping?: Promise<void>;
  /** The service's job-control calls, with job control on. */
  readonly jobOps?: JobOperations;
  private readonly options: LeadershipOptions;

  constructor(
    readonly identity: string,
    readonly clock: NodeClock,
    readonly client: SimStoreClient,
    private readonly scenario: FeatureScenario,
    elections: string[],
    /** This replica's `priority` option (0 when the scenario has none). */
    readonly priority = 0,
    /** Job control on: each new runtime is handed here (its jobs registered, as the explorer does). */
    private readonly setupJobs?: (handle: ElectionRuntime) => void,
  ) {
    this.options = {
      store: client,
      shutdownTimeoutMs: scenario.shutdownTimeoutMs,
      stuckAfterMs: scenario.stuckAfterMs,
      resignWhenStuck: scenario.resignWhenStuck,
    };
    for (const name of elections) this.handles.set(name, this.newHandle(name));
    if (setupJobs) {
      const handles = this.handles;
      const elections = {
        get(name?: string) {
          const handle = name === undefined ? undefined : handles.get(name);
          if (!handle) throw new Error(`no election ${name}`);
          return handle;
        },
        values: () => handles.values(),
      };
      // The service's own default: its calls bounded on the system clock (the world's, per replica).
      this.jobOps = new JobOperations(elections, systemClock);
    }
    this.spread = new SpreadBalancer(this.handles, silent as unknown as Logger, undefined, { spread: scenario.spread });
  }

  async start(): Promise<void> {
    this.started = true;
    await Promise.all([...this.handles.values()].map((handle) => handle.start(undefined)));
    if (!this.stopping) {
      this.spread.start();
      this.spreading = this.scenario.spread;
    }
  }

  async addElection(name: string): Promise<ElectionRuntime | undefined> {
    if (this.handles.has(name) || this.stopping) return undefined;
    const handle = this.newHandle(name);
    this.handles.set(name, handle);
    this.spread.changed();
    if (this.started) await handle.start(undefined);
    return handle;
  }

  async removeElection(name: string): Promise<void> {
    const handle = this.handles.get(name);
    if (!handle || this.stopping) return;
    this.handles.delete(name);
    this.spread.changed();
    await handle.stop();
  }

  /** The service's shutdown: spread stops, then every election drains and releases. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.spread.stop();
      this.spreading = false;
      await Promise.all([...this.handles.values()].map((handle) => handle.stop()));
    })();
    return this.stopping;
  }

  private newHandle(election: string): ElectionRuntime {
    const { timings, standby } = this.scenario;
    const context = { options: this.options, logger: silent, ...(this.setupJobs ? { store: this.client } : {}) };
    const handle = new ElectionRuntime(context, (runtime) => {
      return new Elector({
        store: this.client,
        election,
        identity: this.identity,
        clock: this.clock,
        logger: silent,
        ...timings,
        ...(standby ?? {}),
        ...(this.priority === 0 ? {} : { priority: this.priority }),
        handover: runtime.handoverHooks,
      });
    });
    this.setupJobs?.(handle);
    return handle;
  }
}
