import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'node_modules/.bin');

/**
 * The first half of `npm start`: the package's own build (CommonJS and ESM in dist/, see
 * package.json's `tshy`), then the sample app against it (sample-app/dist/).
 */
export async function buildSampleApp(): Promise<void> {
  for (const [command, args] of [
    ['tshy', []],
    ['tsc', ['-p', 'sample-app/tsconfig.json']],
  ] as const) {
    try {
      await promisify(execFile)(join(BIN, command), args, { cwd: ROOT });
    } catch (error) {
      // tsc reports type errors on stdout.
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`${[command, ...args].join(' ')} failed:\n${stdout}${stderr}`);
    }
  }
}
