import type { Logger } from '@nestjs/common';
import { Elector } from '../../lib/election/elector.js';
import { ElectionHandle } from '../../lib/election.handle.js';
import type { ResolvedLeaderElectionOptions } from '../../lib/interfaces/leader-election-options.interface.js';
import { SpreadBalancer } from '../../lib/spread.balancer.js';
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
 * One replica of the app, built as LeaderElectionService builds it (see its `newHandle`,
 * `addElection`, `removeElection` and `shutdown`), without Nest: a handle per election over a
 * real Elector on this replica's clock and store connection, and a spread balancer over them.
 */
export class SimReplica {
  readonly handles = new Map<string, ElectionHandle>();
  readonly spread?: SpreadBalancer;
  started = false;
  stopping?: Promise<void>;
  private readonly options: ResolvedLeaderElectionOptions;

  constructor(
    readonly identity: string,
    readonly clock: NodeClock,
    readonly client: SimStoreClient,
    private readonly scenario: FeatureScenario,
    elections: string[],
  ) {
    this.options = {
      store: client,
      electionNames: elections,
      spread: scenario.spread,
      shutdownTimeoutMs: scenario.shutdownTimeoutMs,
      stuckAfterMs: scenario.stuckAfterMs,
      resignWhenStuck: scenario.resignWhenStuck,
      closeStoreOnShutdown: false,
    } as unknown as ResolvedLeaderElectionOptions;
    for (const name of elections) this.handles.set(name, this.newHandle(name));
    if (scenario.spread) this.spread = new SpreadBalancer(this.handles, silent as unknown as Logger);
  }

  async start(): Promise<void> {
    this.started = true;
    await Promise.all([...this.handles.values()].map((handle) => handle.start(undefined)));
    if (!this.stopping) this.spread?.start();
  }

  async addElection(name: string): Promise<ElectionHandle | undefined> {
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
      await Promise.all([...this.handles.values()].map((handle) => handle.stop()));
    })();
    return this.stopping;
  }

  private newHandle(election: string): ElectionHandle {
    const { timings, standby } = this.scenario;
    return new ElectionHandle({ options: this.options, logger: silent as unknown as Logger }, (handle) => {
      return new Elector({
        store: this.client,
        election,
        identity: this.identity,
        clock: this.clock,
        logger: silent,
        ...timings,
        ...(standby ?? {}),
        handover: handle.handoverHooks,
      });
    });
  }
}
