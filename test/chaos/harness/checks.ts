// The checks every chaos scenario passes at its end, whatever the spec asserts on top.
import { checkContention, checkLedger, type LedgerReport } from '../../support/ledger.js';
import { CONTENTION_SILENCE_MS } from './bounds.js';
import type { Instance } from './instance.js';
import type { Scenario } from './scenario.js';

export interface ScenarioSummary {
  report: LedgerReport;
  violations: string[];
  storeCalls: number;
  steps: number;
  terms: number;
}

/**
 * Every check on a scenario whose processes have ended: ledger (overlap, terms, leader-only work
 * inside the acting interval, unhandled errors), contention until `until`, exits, secrets in the output.
 */
export function summarize(s: Scenario, until: number): ScenarioSummary {
  const violations = [...s.violations];
  const entries = s.ledger();
  const report = checkLedger(entries, Date.now(), s.evidence());
  violations.push(...report.violations);
  violations.push(
    ...checkContention(
      s.calls(),
      s.instances.flatMap((i) => i.contentionWindows(until)),
      CONTENTION_SILENCE_MS,
    ),
  );
  // Every term that lasted a while ran both kinds of leader-only work (proves the checks saw work).
  for (const interval of report.intervals) {
    if (interval.end - interval.start < 3_000) continue;
    for (const job of ['tick', 'pump']) {
      const ran = entries.some(
        (e) =>
          e.t === 'step' &&
          e.job === job &&
          e.id === interval.id &&
          e.term === interval.term &&
          e.election === interval.election,
      );
      if (!ran)
        violations.push(
          `${interval.id} term ${interval.term}${interval.election === undefined ? '' : ` of ${interval.election}`} ` +
            `led ${interval.end - interval.start} ms without a ${job} step`,
        );
    }
  }
  // Processes that ended on their own, other than the ones we stopped or whose startup must fail.
  for (const i of s.instances) {
    if (i.exit && i.signals.length === 0 && !i.event('startup-failed')) {
      violations.push(`${i.id} exited unexpectedly (${i.exit.code ?? i.exit.signal})\n${i.tail()}`);
    }
  }
  violations.push(...s.leakedSecrets());
  return {
    report,
    violations,
    storeCalls: s.instances.reduce((sum, i) => sum + (i.proxy?.requests ?? 0), 0),
    steps: entries.filter((e) => e.t === 'step').length,
    terms: report.intervals.length,
  };
}

/** Lines of any process output that contain a secret (the key, a connection string, a SAS signature). */
export function leakedSecrets(instances: readonly Instance[], secrets: readonly string[]): string[] {
  const needles = [...new Set(secrets.flatMap((s) => [s, encodeURIComponent(s)]))].filter((s) => s.length >= 8);
  const leaks: string[] = [];
  for (const i of instances) {
    for (const line of i.output) {
      if (needles.some((needle) => line.text.includes(needle))) {
        leaks.push(`${i.id} printed a secret on ${line.stream}: ${line.text.slice(0, 80)}…`);
      }
    }
  }
  return leaks;
}
