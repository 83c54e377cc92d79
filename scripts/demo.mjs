#!/usr/bin/env node
// @ts-check
// The demo behind `npm start`: an Azurite blob service in memory (unless you bring a storage
// account), then N sample-app instances that elect a leader through one lease blob. It reads the
// instances' JSON log lines and prints one line per event that matters: elections, terms, which
// instance ran the cron job, revocations and takeovers.
//
//   npm start                      3 instances on ports 3001–3003; Ctrl+C stops everything
//   npm start -- --tour            kill -9 the leader, then SIGTERM the next; print the timings; exit
//   node scripts/demo.mjs --help   all options (expects a build: `npm run build` + the sample app)
//
// Its parts, in scripts/demo/: options (the command line), output (what a line looks like),
// storage (Azurite or your account), cluster (the instances and their log lines), narration
// (what those lines mean), tour (--tour), shutdown (in order: instances, then Azurite).
import { Cluster } from './demo/cluster.mjs';
import { OptionsError, parseOptions, USAGE } from './demo/options.mjs';
import { say, style } from './demo/output.mjs';
import { Shutdown } from './demo/shutdown.mjs';
import { instancePortsFree, storageConnection } from './demo/storage.mjs';
import { tour } from './demo/tour.mjs';

async function main() {
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof OptionsError)) throw error;
    console.error(error.exitCode === 2 ? error.message : `demo: ${error.message}`);
    process.exit(error.exitCode);
  }
  if (options === 'help') {
    console.log(USAGE);
    process.exit(0);
  }
  const shutdown = new Shutdown();
  shutdown.handleSignals();
  const cluster = new Cluster(options, (code) => shutdown.run(code));
  shutdown.cluster = cluster;
  try {
    // Before Azurite: a taken port should fail fast, with nothing to clean up.
    if (!(await instancePortsFree(options))) process.exit(1);
    const connection = await storageConnection(cluster);
    const { basePort, instanceCount } = options;
    say('demo', `starting ${instanceCount} sample-app instances on ports ${basePort}–${basePort + instanceCount - 1}`);
    for (let i = 0; i < instanceCount; i++) cluster.startInstance(i, connection);
    if (options.tour) {
      try {
        await tour(cluster);
        await shutdown.run(0);
      } catch (error) {
        say('tour', style.red(`failed: ${error instanceof Error ? error.message : String(error)}`));
        await shutdown.run(1);
      }
    }
  } catch (error) {
    say('demo', style.red(error instanceof Error ? error.message : String(error)));
    void shutdown.run(1);
  }
}

await main();
