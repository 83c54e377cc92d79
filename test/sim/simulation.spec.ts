import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type CampaignReport, campaign } from './campaign.js';
import { CHECKS, enabledChecks } from './checker.js';

/**
 * Deterministic simulation of 3–5 real Electors over a faulty simulated store, and of replicas
 * running several elections through the handle layer with every feature (see test/sim).
 * `SIM_SEED` and `SIM_RUNS` choose the campaign (`SIM_RUN=<n>` replays run n alone; `SIM_FIRST_RUN=<n>`
 * starts it at run n, as the mutant runs do); `SIM_CHECKS` / `SIM_FAULTS` narrow it; `SIM_FOLD=never` keeps
 * every run on the separate calls (by default odd seeds fold the renewal: sim-store.ts `foldsIn`;
 * `SIM_FOLD=flip` swaps them). Long campaigns:
 * `node bench/experiments/sim-campaign.mjs`.
 */
const seed = Number(process.env.SIM_SEED ?? 20_261_123);
const single = process.env.SIM_RUN === undefined ? undefined : Number(process.env.SIM_RUN);
const firstRun = single ?? Number(process.env.SIM_FIRST_RUN ?? 0);
const runs = single === undefined ? Number(process.env.SIM_RUNS ?? 200) : 1;
/** The first runs also simulate the feature world (test/sim/features.ts): default 40 (~3 s each). */
const featureRuns = Math.min(runs, Number(process.env.SIM_FEATURE_RUNS ?? 40));
const checks = enabledChecks();
const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

let report: CampaignReport;

beforeAll(async () => {
  report = await campaign(seed, runs, checks, firstRun, undefined, undefined, featureRuns);
  const figures = {
    ...report,
    recoveries: undefined,
    digests: undefined,
    byCheck: Object.fromEntries(
      Object.entries(report.byCheck).map(([k, v]) => [
        k,
        { count: v.count, first: { run: v.first.run, violation: v.first.violation } },
      ]),
    ),
  };
  console.log(`simulation: seed ${seed}, ${JSON.stringify(figures, null, 1)}`);
}, 3_600_000);

/**
 * A simulation that something outside its seed steers proves nothing and fails at random: the first
 * run (both worlds), replayed in a plain Node process through the swc loader (as `npm run bench:sim`
 * runs it), must give the event log Jest's run gave, digest for digest. (`import('cron')` at each
 * ledger's first tick once settled there after as many event-loop turns as the loader's thread took.)
 */
it('replays a run exactly from its seed, in Jest and in plain Node', async () => {
  const features = Math.min(1, featureRuns);
  const { stdout } = await run(
    process.execPath,
    ['--import', './test/support/swc-register.mjs', 'test/sim/replay.ts', ...[seed, firstRun, 1, features].map(String)],
    { cwd: root, env: { ...process.env, SIM_CHECKS: [...checks].join(',') }, maxBuffer: 1 << 20 },
  );
  expect(JSON.parse(stdout).digests).toEqual(report.digests.slice(0, 1 + features));
}, 600_000);

describe.each(CHECKS.filter((c) => checks.has(c)))('simulation check %s', (check) => {
  it('holds in every simulated schedule', () => {
    const found = report.byCheck[check];
    if (found) {
      throw new Error(
        `${check}: ${found.count} violation(s); first in run ${found.first.run} ` +
          `(replay: SIM_SEED=${seed} SIM_RUN=${found.first.run}, ${found.first.world} world): ` +
          `${found.first.violation.message} ` +
          `at ${found.first.violation.at} ms\nscenario: ${JSON.stringify(found.first.scenario)}`,
      );
    }
  });
});
