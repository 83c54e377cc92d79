import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const TSC = join(ROOT, 'node_modules/.bin/tsc');

/** The first half of `npm start`: build the library (dist/), then the sample app against it (sample-app/dist/). */
export async function buildSampleApp(): Promise<void> {
  for (const project of ['tsconfig.build.json', 'sample-app/tsconfig.json']) {
    try {
      await promisify(execFile)(TSC, ['-p', project], { cwd: ROOT });
    } catch (error) {
      // tsc reports type errors on stdout.
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`tsc -p ${project} failed:\n${stdout}${stderr}`);
    }
  }
}
