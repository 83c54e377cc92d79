import fc from 'fast-check';
import type { CheckName, Violation } from './checker.js';
import { type FeatureScenario, featureScenarioOf } from './feature-scenario.js';
import { simulateFeatures } from './features.js';
import { enabledFaults, type Scenario, scenarioArbitrary } from './scenario.js';
import { type RunResult, simulate } from './simulate.js';

export interface CampaignFinding {
  run: number;
  /** fast-check seed of this run alone: `SIM_SEED=<campaign seed> SIM_RUN=<run>` replays it. */
  runSeed: number;
  violation: Violation;
  /** Which world: the electors alone (`electors`) or the feature world (`features`). */
  world: 'electors' | 'features';
  scenario: Scenario | FeatureScenario;
}

export interface CampaignReport {
  seed: number;
  runs: number;
  /** Of which in the feature world (every run also runs the elector world). */
  featureRuns: number;
  wallMs: number;
  simulatedMs: number;
  events: number;
  /**
   * Every run's event-log digest, folded in run order (hex): a campaign replayed with the same seed,
   * runs and checks prints the same one, or something outside the seed steered it.
   */
  digest: string;
  /** Each run's digest, in run order (a run's elector world, then its feature world if simulated). */
  digests: number[];
  elections: number;
  /** Violations by check, and the first run that showed each. */
  byCheck: Partial<Record<CheckName, { count: number; first: CampaignFinding }>>;
  maxLagMs: number;
  /** Terms whose signal outlived their store lease after a resume, within the stated slice; the worst (ms). */
  resumeOverlaps: number;
  maxResumeOverlapMs: number;
  /** Orphaned leases the orphan check excused: owner frozen, or its release of that id failed. */
  orphanExcused: { frozen: number; releaseFailed: number };
  recoveryMs: { p50: number; p99: number; max: number } | undefined;
  /** Every run's healing → one leader time (ms), for merging campaigns run in parallel. */
  recoveries: number[];
}

/** The seed of run `run` of a campaign: each run is replayable on its own. */
export function runSeed(seed: number, run: number): number {
  return (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(run + 1, 0xc2b2ae35)) >>> 0;
}

export function scenarioOf(seed: number, run: number): Scenario {
  const [scenario] = fc.sample(scenarioArbitrary(enabledFaults()), { seed: runSeed(seed, run), numRuns: 1 });
  return scenario;
}

export async function campaign(
  seed: number,
  runs: number,
  checks: Set<CheckName>,
  firstRun = 0,
  onProgress?: (done: number) => void,
  /** Asked before each run: true ends the campaign early (`runs` then counts the runs done). */
  timeUp?: () => boolean,
  /** How many of the runs also run the feature world (default all). */
  featureRuns = runs,
): Promise<CampaignReport> {
  const started = Date.now();
  const report: CampaignReport = {
    seed,
    runs,
    featureRuns: 0,
    wallMs: 0,
    simulatedMs: 0,
    events: 0,
    digest: '',
    digests: [],
    elections: 0,
    byCheck: {},
    maxLagMs: 0,
    resumeOverlaps: 0,
    maxResumeOverlapMs: 0,
    orphanExcused: { frozen: 0, releaseFailed: 0 },
    recoveryMs: undefined,
    recoveries: [],
  };
  const recoveries = report.recoveries;
  let digest = 0x811c9dc5;
  let currentRun = firstRun;
  for (let run = firstRun; run < firstRun + runs; run++) {
    currentRun = run;
    if (timeUp?.()) {
      report.runs = run - firstRun;
      break;
    }
    const scenario = scenarioOf(seed, run);
    await merge(await simulate(scenario, checks), 'electors', scenario);
    if (run - firstRun < featureRuns) {
      const features = featureScenarioOf(runSeed(seed, run));
      report.featureRuns += 1;
      await merge(await simulateFeatures(features, checks), 'features', features);
    }
    onProgress?.(run - firstRun + 1);
  }
  report.recoveryMs = quantiles(recoveries);
  report.digest = digest.toString(16).padStart(8, '0');
  report.wallMs = Date.now() - started;
  return report;

  async function merge(result: RunResult, world: CampaignFinding['world'], scenario: Scenario | FeatureScenario) {
    report.simulatedMs += result.simulatedMs;
    report.events += result.events;
    digest = Math.imul(digest ^ result.digest, 0x01000193) >>> 0;
    report.digests.push(result.digest);
    report.elections += result.elections;
    report.maxLagMs = Math.max(report.maxLagMs, result.maxLagMs);
    report.resumeOverlaps += result.resumeOverlaps;
    report.maxResumeOverlapMs = Math.max(report.maxResumeOverlapMs, result.maxResumeOverlapMs);
    report.orphanExcused.frozen += result.orphanExcused.frozen;
    report.orphanExcused.releaseFailed += result.orphanExcused.releaseFailed;
    if (result.recoveryMs !== undefined) recoveries.push(result.recoveryMs);
    for (const violation of result.violations) {
      const entry = report.byCheck[violation.check];
      if (entry) entry.count += 1;
      else
        report.byCheck[violation.check] = {
          count: 1,
          first: { run: currentRun, runSeed: runSeed(seed, currentRun), violation, world, scenario },
        };
    }
  }
}

export function quantiles(values: number[]): CampaignReport['recoveryMs'] {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
  return { p50: at(0.5), p99: at(0.99), max: at(1) };
}
