// @ts-check
// `npm test [jest args]`: Jest over test/ (unit, conformance, e2e, chaos), then — for a whole run
// only — the Nest e2e suite again against Nest 11 (test/nest11, its own lockfile).
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
/** @param {string[]} argv */
const run = (argv) => spawnSync(process.execPath, argv, { stdio: 'inherit' }).status ?? 1;

let status = run(['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', ...args]);
if (status === 0 && args.length === 0) status = run(['test/nest11/run.mjs']);
process.exit(status);
