// @ts-check
// The demo's command line: parsed when main() asks, never at import time.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const APP_MAIN = join(ROOT, 'sample-app/dist/main.js');
const LIB_MAIN = join(ROOT, 'dist/esm/index.js');
const DEFAULT_ELECTIONS = ['reports', 'billing', 'cleanup'];

export const USAGE = `Usage: node scripts/demo.mjs [options]        (npm start -- [options] builds first)

  --tour            hand one election over to a named instance, kill -9 the leader of the
                    default election, then SIGTERM its successor; print the measured
                    handover and takeover times, then stop everything and exit
  --instances <n>   how many sample-app instances (default 3; --tour needs at least 3)
  --port <port>     port of the first instance; the others follow (default 3001)
  --verbose         also print every log line of the instances
  --help            this text

Environment: AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT_URL to use a real
storage account instead of the embedded Azurite; ELECTIONS to name the leases, comma-separated, the
default election first (default ${DEFAULT_ELECTIONS.join(',')}; ELECTION=<name> for one).`;

/**
 * The elections the instances run: what the sample app reads from the same variables (see
 * sample-app/src/config.ts), passed on explicitly so the demo knows what to wait for.
 * @param {NodeJS.ProcessEnv} env
 * @returns {string[]}
 */
export function demoElections(env = process.env) {
  const listed = env.ELECTIONS ? env.ELECTIONS.split(',') : env.ELECTION ? [env.ELECTION] : DEFAULT_ELECTIONS;
  const names = [...new Set(listed.map((name) => name.trim()).filter((name) => name !== ''))];
  return names.length > 0 ? names : DEFAULT_ELECTIONS;
}

/**
 * @typedef {object} DemoOptions
 * @property {boolean} tour
 * @property {number} instanceCount
 * @property {number} basePort
 * @property {boolean} verbose
 * @property {string[]} elections the default first
 */

/** A bad command line (exit 2, with the usage) or a bad value (exit 1). */
export class OptionsError extends Error {
  /**
   * @param {string} message
   * @param {number} exitCode
   */
  constructor(message, exitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * The options of `argv`, or `'help'`; throws an OptionsError for a bad command line.
 * @param {string[]} argv
 * @returns {DemoOptions | 'help'}
 */
export function parseOptions(argv) {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        tour: { type: 'boolean', default: false },
        instances: { type: 'string', default: '3' },
        port: { type: 'string', default: '3001' },
        verbose: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    throw new OptionsError(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`, 2);
  }
  if (values.help) return 'help';
  const instanceCount = Number(values.instances);
  const basePort = Number(values.port);
  if (!Number.isInteger(instanceCount) || instanceCount < 1 || instanceCount > 9)
    throw new OptionsError('--instances must be 1 to 9', 1);
  if (!Number.isInteger(basePort) || basePort < 1 || basePort + instanceCount - 1 > 65_535)
    throw new OptionsError('--port must be a valid port', 1);
  if (values.tour && instanceCount < 3)
    throw new OptionsError('--tour needs at least 3 instances (one to crash, one to stop, one to take over)', 1);
  for (const [file, hint] of [
    [LIB_MAIN, 'npm run build'],
    [APP_MAIN, 'npx tsc -p sample-app/tsconfig.json'],
  ]) {
    if (!existsSync(file))
      throw new OptionsError(`${file} is missing: run \`npm start\` (it builds first) or \`${hint}\``, 1);
  }
  const elections = demoElections();
  if (values.tour && elections.length < 2)
    throw new OptionsError('--tour needs at least 2 elections (one to hand over, one to crash): unset ELECTION', 1);
  return { tour: Boolean(values.tour), instanceCount, basePort, verbose: Boolean(values.verbose), elections };
}
