import { setTimeout as sleep } from 'node:timers/promises';
import { OnElected } from '@leaderlease/nestjs';
import { Injectable, Logger } from '@nestjs/common';
import { logEvent } from './log-event.js';

/**
 * A leader-only background loop (think: a queue pump). It starts when this instance is elected
 * and stops when the term's signal aborts — on revocation, lost lease, or shutdown. It runs for
 * the whole term by design, so it opts out of stuck-work detection (the app sets stuckAfterMs).
 */
@Injectable()
export class QueueWorker {
  private readonly logger = new Logger(QueueWorker.name);

  @OnElected({ stuckAfterMs: false })
  async pump({ term, signal }: { term: number; signal: AbortSignal }): Promise<void> {
    logEvent(this.logger, 'worker-started', { term }, `queue worker started for term ${term}`);
    let processed = 0;
    while (!signal.aborted) {
      try {
        await sleep(1_000, undefined, { signal }); // stands for "take the next message and handle it"
        processed++;
      } catch {
        break; // aborted: the term is over
      }
    }
    logEvent(
      this.logger,
      'worker-stopped',
      { term, processed },
      `queue worker stopped after ${processed} items: term ${term} ended`,
    );
  }
}
