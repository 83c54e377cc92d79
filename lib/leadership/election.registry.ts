import type { ElectionRuntime } from './election-runtime.js';
import { leadershipMessages as messages } from './leadership.messages.js';

/**
 * The elections of one application by name, the default (first) one apart: what a `@LeaderOnly`
 * call resolves its election in, without going back up through the Nest service.
 */
export class ElectionRegistry {
  private readonly byName = new Map<string, ElectionRuntime>();
  private first?: ElectionRuntime;

  /** The runtime of election `name` (default: the default election). Throws for a name the app does not run. */
  get(name?: string): ElectionRuntime {
    if (name === undefined) return this.first as ElectionRuntime;
    const runtime = this.byName.get(name);
    if (!runtime) throw new Error(messages.unknownElection('election()', name, [...this.byName.keys()]));
    return runtime;
  }

  /** The default election (the first added). */
  get default(): ElectionRuntime {
    return this.first as ElectionRuntime;
  }

  /** Every election by name, the default first (spread reads it live). */
  get all(): ReadonlyMap<string, ElectionRuntime> {
    return this.byName;
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  get size(): number {
    return this.byName.size;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  values(): IterableIterator<ElectionRuntime> {
    return this.byName.values();
  }

  add(name: string, runtime: ElectionRuntime): void {
    this.byName.set(name, runtime);
    this.first ??= runtime;
  }

  delete(name: string): void {
    this.byName.delete(name);
  }
}
