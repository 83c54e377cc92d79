import type { Logger } from '@nestjs/common';
import { Elector } from '../../lib/election/elector.js';
import { ElectionRuntime } from '../../lib/leadership/election-runtime.js';
import type { LeadershipOptions } from '../../lib/leadership/leadership-options.js';
import { SpreadBalancer } from '../../lib/leadership/spread.balancer.js';
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
 * replica's clock and store connection, and a spread balancer over them.
 */
export class SimReplica {
  readonly handles = new Map<string, ElectionRuntime>();
  readonly spread?: SpreadBalancer;
  started = false;
  /** The spread balancer runs (started, not yet stopped): its ticks may file spread requests. */
  spreading = false;
  stopping?: Promise<void>;
  private readonly options: LeadershipOptions;

  constructor(
    readonly identity: string,
    readonly clock: NodeClock,
    readonly client: SimStoreClient,
    private readonly scenario: FeatureScenario,
    elections: string[],
  ) {
    this.options = {
      store: client,
      shutdownTimeoutMs: scenario.shutdownTimeoutMs,
      stuckAfterMs: scenario.stuckAfterMs,
      resignWhenStuck: scenario.resignWhenStuck,
    };
    for (const name of elections) this.handles.set(name, this.newHandle(name));
    if (scenario.spread) this.spread = new SpreadBalancer(this.handles, silent as unknown as Logger);
  }

  async start(): Promise<void> {
    this.started = true;
    await Promise.all([...this.handles.values()].map((handle) => handle.start(undefined)));
    if (!this.stopping && this.spread) {
      this.spread.start();
      this.spreading = true;
    }
  }

  async addElection(name: string): Promise<ElectionRuntime | undefined> {
    if (this.handles.has(name) || this.stopping) return undefined;
    const handle = this.newHandle(name);
    this.handles.set(name, handle);
    this.spread?.changed();
    if (this.started) await handle.start(undefined);
    return handle;
  }

  async removeElection(name: string): Promise<void> {
    const handle = this.handles.get(name);
    if (!handle || this.stopping) return;
    this.handles.delete(name);
    this.spread?.changed();
    await handle.stop();
  }

  /** The service's shutdown: spread stops, then every election drains and releases. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.spread?.stop();
      this.spreading = false;
      await Promise.all([...this.handles.values()].map((handle) => handle.stop()));
    })();
    return this.stopping;
  }

  private newHandle(election: string): ElectionRuntime {
    const { timings, standby } = this.scenario;
    return new ElectionRuntime({ options: this.options, logger: silent }, (runtime) => {
      return new Elector({
        store: this.client,
        election,
        identity: this.identity,
        clock: this.clock,
        logger: silent,
        ...timings,
        ...(standby ?? {}),
        handover: runtime.handoverHooks,
      });
    });
  }
}
