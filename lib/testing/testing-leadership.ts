import { Injectable } from '@nestjs/common';
import { LeaderElectionExplorer } from '../leader-election.explorer.js';
import { messages } from '../leader-election.messages.js';
import { TestingElector } from './testing.elector.js';

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
    private readonly elector: TestingElector,
    private readonly explorer: LeaderElectionExplorer,
  ) {}

  /**
   * This instance wins a term: `term` (the fencing token) defaults to one more than the last.
   * Already leading: nothing happens, unless `term` differs — then the old term ends first.
   */
  async elect(term?: number): Promise<void> {
    this.checkRunning('elect');
    if (term !== undefined && !(Number.isSafeInteger(term) && term > 0)) {
      throw new TypeError(messages.testingInvalidTerm(term));
    }
    this.elector.elect(term);
  }

  /**
   * This instance loses its term (the signal aborts, `@OnRevoked` gets `reason`; default: the
   * store's "no longer ours"). The leader becomes unknown, as after a real loss. No-op when following.
   */
  async revoke(reason: string = messages.reasonLost): Promise<void> {
    this.checkRunning('revoke');
    this.elector.revoke(String(reason));
  }

  /**
   * Another instance leads (`undefined`: no known leader). If this one led, its term ends first.
   * Passing this instance's own identity is `elect()`.
   */
  async setLeader(identity: string | undefined): Promise<void> {
    this.checkRunning('setLeader');
    if (identity !== undefined && (typeof identity !== 'string' || identity === '')) {
      throw new TypeError(messages.testingInvalidIdentity(identity));
    }
    this.elector.setLeader(identity);
  }

  /**
   * Binds an instance made with `new` to this application's election, as if Nest had created it:
   * its `@LeaderOnly` methods run on the leader and are skipped on a follower, and its
   * `@OnElected` / `@OnRevoked` / `@OnLeaderChanged` handlers are called from now on — at once with
   * the current state, when bound after `init()`. Returns the instance.
   */
  bind<T extends object>(instance: T): T {
    if (instance === null || (typeof instance !== 'object' && typeof instance !== 'function')) {
      throw new TypeError(messages.testingNotAnObject(instance));
    }
    if (!this.explorer.adopt(instance)) {
      throw new Error(messages.testingBoundElsewhere(instance.constructor?.name ?? 'the instance'));
    }
    return instance;
  }

  private checkRunning(method: string): void {
    const state = this.elector.state;
    // Promise-returning methods report by rejecting (async), never by throwing synchronously.
    if (state === 'idle' || state === 'stopped') throw new Error(messages.testingNotRunning(method, state));
  }
}
