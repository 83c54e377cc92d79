import { Inject, Injectable } from '@nestjs/common';
import { electionMessages } from '../election/election.messages.js';
import { LeaderElectionExplorer } from '../nest/leader-election.explorer.js';
import { type TestingElector, TestingElectors } from './testing.elector.js';
import { testingMessages } from './testing.messages.js';

/**
 * Moves this application's leadership in a test. Each method changes the state of the elector
 * under the real LeaderElectionService, which emits what a real election would; the promise
 * resolves once `isLeader()`, `status()`, `events$`, `isLeader$`, `signal`, the guard, `@LeaderOnly`
 * and the `@OnElected` / `@OnRevoked` / `@OnLeaderChanged` handlers have all seen the change. (An
 * `async` handler has been called by then; what it awaits is its own business — an `@OnElected`
 * pump may run for the whole term.) Call them after `init()` and before `close()`.
 */
@Injectable()
export class TestingLeadership {
  constructor(
    // Typed by what it uses: TestingElectors is @internal (not in the shipped .d.ts), so naming it
    // here would leave the declaration a name that does not exist. Injected by its token.
    @Inject(TestingElectors)
    private readonly electors: { get(election: string | undefined, method: string): TestingElector },
    private readonly explorer: LeaderElectionExplorer,
  ) {}

  /**
   * This instance wins a term of `election` (default: the default election): `term` (the fencing
   * token) defaults to one more than the last. Already leading: nothing happens, unless `term`
   * differs — then the old term ends first.
   */
  async elect(term?: number, election?: string): Promise<void> {
    const elector = this.running('elect', election);
    if (term !== undefined && !(Number.isSafeInteger(term) && term > 0)) {
      throw new TypeError(testingMessages.testingInvalidTerm(term));
    }
    elector.elect(term);
  }

  /**
   * This instance loses its term of `election` (the signal aborts, `@OnRevoked` gets `reason`;
   * default: the store's "no longer ours"). The leader becomes unknown, as after a real loss.
   * No-op when following.
   */
  async revoke(reason: string = electionMessages.reasonLost, election?: string): Promise<void> {
    this.running('revoke', election).revoke(String(reason));
  }

  /**
   * Another instance leads `election` (`undefined`: no known leader). If this one led, its term
   * ends first. Passing this instance's own identity is `elect()`.
   */
  async setLeader(identity: string | undefined, election?: string): Promise<void> {
    const elector = this.running('setLeader', election);
    if (identity !== undefined && (typeof identity !== 'string' || identity === '')) {
      throw new TypeError(testingMessages.testingInvalidIdentity(identity));
    }
    elector.setLeader(identity);
  }

  /**
   * Binds an instance made with `new` to this application's election, as if Nest had created it:
   * its `@LeaderOnly` methods run on the leader and are skipped on a follower, and its
   * `@OnElected` / `@OnRevoked` / `@OnLeaderChanged` handlers are called from now on — at once with
   * the current state, when bound after `init()`. Returns the instance.
   */
  bind<T extends object>(instance: T): T {
    if (instance === null || (typeof instance !== 'object' && typeof instance !== 'function')) {
      throw new TypeError(testingMessages.testingNotAnObject(instance));
    }
    if (!this.explorer.adopt(instance)) {
      throw new Error(testingMessages.testingBoundElsewhere(instance.constructor?.name ?? 'the instance'));
    }
    return instance;
  }

  /** The elector of `election`, when the app runs. */
  private running(method: string, election: string | undefined): TestingElector {
    const elector = this.electors.get(election, method);
    const state = elector.state;
    // Promise-returning methods report by rejecting (async), never by throwing synchronously.
    if (state === 'idle' || state === 'stopped') throw new Error(testingMessages.testingNotRunning(method, state));
    return elector;
  }
}
