import { AsyncLocalStorage } from 'node:async_hooks';

/** What {@link currentLeadership} answers inside a leader-only run: the term it runs for. */
export interface LeadershipContext {
  /** The election (lease name) the run leads. */
  readonly election: string;
  /** This replica's identity. */
  readonly identity: string;
  /** The term the run started in: the fencing token to write with. */
  readonly term: number;
  /** Aborted the moment that term ends: pass it to anything that should stop with it. */
  readonly signal: AbortSignal;
}

// One storage per process, not per copy of the package: an app that loads both the CommonJS and the
// ESM build (a CommonJS dependency beside ESM code) still finds the run's context from either copy.
const STORAGE_KEY = Symbol.for('@leaderlease/nestjs.leadership-context');
const holder = globalThis as { [STORAGE_KEY]?: AsyncLocalStorage<LeadershipContext> };
holder[STORAGE_KEY] ??= new AsyncLocalStorage();
const storage: AsyncLocalStorage<LeadershipContext> = holder[STORAGE_KEY];

/**
 * The leadership a leader-only run belongs to — inside a `@LeaderOnly` method, a `runIfLeader`
 * callback or an `@OnElected` handler, including after `await`s, timers and callbacks started from
 * it — else `undefined`. It is the term the run *started* in: after that term ends it still answers
 * with it, its `signal` aborted, so the work can tell (and fence its writes with `term`).
 */
export function currentLeadership(): LeadershipContext | undefined {
  return storage.getStore();
}

/** @internal Runs `fn` with `context` as {@link currentLeadership}'s answer (and everything it starts). */
export function runInLeadership<T>(context: LeadershipContext | undefined, fn: () => T): T {
  return context === undefined ? fn() : storage.run(context, fn);
}

/**
 * @internal The context of the term an election leads: one object per term, made at the term's
 * first run, so the leader's hot path allocates none. Cleared when a term starts or ends.
 */
export class TermContexts {
  private current?: LeadershipContext;

  of(elector: Pick<LeadershipContext, 'election' | 'identity' | 'signal'> & { term: number | undefined }) {
    if (this.current) return this.current;
    const { term } = elector;
    if (term === undefined) return undefined;
    const { election, identity, signal } = elector;
    this.current = Object.freeze({ election, identity, term, signal });
    return this.current;
  }

  clear(): void {
    this.current = undefined;
  }
}
