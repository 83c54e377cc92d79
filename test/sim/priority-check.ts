import type { CheckName } from './checker.js';
import type { FeatureScenario } from './feature-scenario.js';
import type { SimLeaseServer } from './sim-store.js';

/** A live replica at a probe instant: its priority, and the elections it runs with their health. */
export interface PriorityReplica {
  identity: string;
  priority: number;
  /** Election → its handle reports healthy. */
  healthy: Map<string, boolean>;
}

type Fail = (check: CheckName, message: string, key?: string) => void;

/**
 * The preferred leader's properties (issue #28) in the feature world, check `priority`:
 *
 * 1. A move by priority goes up: every term handed over by a `priority` request goes to a replica of
 *    strictly higher priority than the holder it leaves (any phase, faults included).
 * 2. It converges: after the quiet phase the world stays calm (no operator, no new work) until the
 *    placement has been settled for `holdMs`, at most `settleMs`; by then it is settled — every election held by a live replica, and no
 *    live healthy replica running it has a strictly higher priority than its holder, unless a
 *    directed handover pins it. With spread, the balancer's rules instead: no holder leads 2 more
 *    than another replica, and none of lower priority leads more than one of higher priority.
 *    Not held in worlds with standby followers (a standby learns of a holder only every
 *    `standbyPollMs`, up to an hour).
 * 3. No flapping: while the placement is settled and nothing around it changes (the live replicas,
 *    their health, the pinned elections), no election changes hands at all.
 */
export class PriorityCheck {
  private seenTerms = 0;
  private readonly lastHolder = new Map<string, string>();
  private previous?: { signature: string; holders: Map<string, string>; settled: boolean };
  /** For the figures: when the placement was last seen becoming settled (true time), and how often it was. */
  settledAt?: number;
  settlings = 0;

  constructor(
    private readonly scenario: FeatureScenario,
    private readonly server: SimLeaseServer,
    private readonly fail: Fail,
    /** The priority of an identity (`r<i>` or `r<i>.<restart>`). */
    private readonly priorityOf: (identity: string) => number,
  ) {}

  /** (1) At every probe: the terms granted since the last one. */
  checkMoves(): void {
    const { terms } = this.server;
    for (; this.seenTerms < terms.length; this.seenTerms++) {
      const granted = terms[this.seenTerms] as (typeof terms)[number];
      const before = this.lastHolder.get(granted.election);
      this.lastHolder.set(granted.election, granted.holder);
      if (granted.by?.reason !== 'priority' || before === undefined) continue;
      const [from, to] = [this.priorityOf(before), this.priorityOf(granted.holder)];
      if (to <= from)
        this.fail(
          'priority',
          `${granted.election} term ${granted.term} handed over by priority request ${granted.by.id} from ${before} (priority ${from}) to ${granted.holder} (priority ${to}): not higher`,
        );
    }
  }

  /** (3) At every probe of the settle phase. */
  probe(elections: string[], replicas: PriorityReplica[], at: number): void {
    const signature = this.signature(elections, replicas);
    const holders = new Map(
      elections.map((e) => {
        const slot = this.server.slot(e);
        return [e, slot.held ? `${slot.holder} term ${slot.term}` : `free after term ${slot.term}`];
      }),
    );
    const previous = this.previous;
    if (previous?.settled && previous.signature === signature) {
      for (const [election, now] of holders) {
        const before = previous.holders.get(election);
        if (before !== undefined && before !== now)
          this.fail(
            'priority',
            `${election} moved from ${before} to ${now} at ${at.toFixed(0)} ms while the placement was settled and nothing around it changed (flapping); priorities ${this.describe(replicas)}`,
            `priority:flap:${election}`,
          );
      }
    }
    const settled = this.unsettled(elections, replicas) === undefined;
    if (settled && !previous?.settled) {
      this.settledAt = at;
      this.settlings += 1;
    }
    this.previous = { signature, holders, settled };
  }

  /** How long the placement has been settled at `now` (0 when it is not). */
  settledFor(now: number): number {
    return this.previous?.settled && this.settledAt !== undefined ? now - this.settledAt : 0;
  }

  /** (2) At the end of the settle phase. */
  final(elections: string[], replicas: PriorityReplica[]): void {
    if (this.scenario.standby) return;
    const why = this.unsettled(elections, replicas);
    if (why !== undefined)
      this.fail(
        'priority',
        `placement not settled ${this.scenario.priority?.settleMs} ms after the quiet phase: ${why}; priorities ${this.describe(replicas)}`,
      );
  }

  /** Why the placement is not settled (see 2); undefined when it is. */
  private unsettled(elections: string[], replicas: PriorityReplica[]): string | undefined {
    const byId = new Map(replicas.map((r) => [r.identity, r]));
    const counts = new Map<string, number>();
    for (const election of elections) {
      const slot = this.server.slot(election);
      if (!slot.held || !byId.has(slot.holder as string)) return `${election} has no live holder`;
      counts.set(slot.holder as string, (counts.get(slot.holder as string) ?? 0) + 1);
    }
    for (const replica of replicas)
      for (const [election, healthy] of replica.healthy) {
        if (!healthy) return `${replica.identity} is not healthy in ${election}`;
      }
    for (const election of elections) {
      const slot = this.server.slot(election);
      if (slot.meta?.pinned) continue;
      const holder = byId.get(slot.holder as string) as PriorityReplica;
      const held = counts.get(holder.identity) ?? 0;
      for (const other of replicas) {
        if (other === holder || !other.healthy.has(election)) continue;
        const theirs = counts.get(other.identity) ?? 0;
        if (this.scenario.spread && held >= theirs + 2)
          return `${holder.identity} leads ${held}, ${other.identity} ${theirs}: spread would move ${election}`;
        const higher = other.priority > holder.priority;
        if (higher && (!this.scenario.spread || held > theirs))
          return `${other.identity} (priority ${other.priority}) would take ${election} from ${holder.identity} (priority ${holder.priority})`;
      }
    }
    return undefined;
  }

  /** What settling depends on besides the holders: who runs what, healthy or not, and the pins. */
  private signature(elections: string[], replicas: PriorityReplica[]): string {
    const pinned = elections.filter((e) => this.server.slot(e).meta?.pinned === true);
    const running = replicas.map((r) => `${r.identity}:${[...r.healthy].map(([e, h]) => `${e}${h ? '+' : '-'}`)}`);
    return JSON.stringify({ elections, pinned, running });
  }

  private describe(replicas: PriorityReplica[]): string {
    return replicas.map((r) => `${r.identity}=${r.priority}`).join(', ');
  }
}
