// Replays runs of a campaign in a plain Node process (TypeScript through the tests' swc loader, as
// `npm run bench:sim` runs them) and prints each run's event-log digest as JSON:
//
//   node --import ./test/support/swc-register.mjs test/sim/replay.ts <seed> <first run> <runs> <feature runs>
//
// simulation.spec.ts compares them with the digests Jest's run of the same campaign gave: a world
// steered by anything outside its seed (a real timer, I/O, the module loader) differs between the two.
import { campaign } from './campaign.js';
import { enabledChecks } from './checker.js';

const [seed, firstRun, runs, featureRuns] = process.argv.slice(2).map(Number) as [number, number, number, number];
const report = await campaign(seed, runs, enabledChecks(), firstRun, undefined, undefined, featureRuns);
process.stdout.write(JSON.stringify({ digests: report.digests }));
