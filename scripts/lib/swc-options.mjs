// @ts-check
// The swc options of the repo, written once in .swcrc: legacy decorators and decorator metadata,
// which Nest's DI needs. Jest (@swc/jest) and the loader for child processes
// (test/support/swc-loader.mjs) both take them from here, so tests and the processes they spawn
// compile TypeScript alike.
import { readFileSync } from 'node:fs';

/** @returns {import('@swc/core').Options} */
export function swcOptions() {
  const { $schema: _schema, ...options } = JSON.parse(readFileSync(new URL('../../.swcrc', import.meta.url), 'utf8'));
  // Already read: swc must not look for a .swcrc again and merge it in.
  return { ...options, swcrc: false };
}
